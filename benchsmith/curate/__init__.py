"""Curation: the executor over ``STAGES``, the decision log, the curated publication and audit."""
