"""Image fingerprints and duplicate search shared by every family and stage (no family knowledge)."""
