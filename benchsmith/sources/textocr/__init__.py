"""TextOCR v0.1 (Open Images words with polygons): layout, reader, sample writer, source verbs."""
