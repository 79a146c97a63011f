"""Publish built datasets in Hugging Face layout (cards, versions, provenance) and audit them."""
