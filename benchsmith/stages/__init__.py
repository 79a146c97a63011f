"""Benchmark-agnostic stages: small functions over tables of samples or images."""
