"""Exports of published folders to the formats evaluation harnesses read (VLMEvalKit's TSV)."""
