"""The Hugging Face layout: sharded content-addressed writer, cards, and readers of published folders."""
