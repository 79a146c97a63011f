"""Curation: run the benchmark-agnostic stages over any dataset in Hugging Face layout."""
