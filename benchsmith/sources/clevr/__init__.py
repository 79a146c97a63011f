"""CLEVR v1.0: scenes reader, resumable fetch, miniature sample writer."""
