"""benchsmith: rebuild multimodal LLM benchmarks from raw sources as versioned HF datasets."""

__version__ = "0.1.0"
