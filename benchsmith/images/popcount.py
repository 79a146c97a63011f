"""Bits set per 64-bit word: the Hamming distance of two hashes is ``popcount(a ^ b)``."""

from __future__ import annotations

import numpy as np

_BYTE_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)


def popcount_lut(values: np.ndarray) -> np.ndarray:
    """Bits set per uint64 with a byte lookup table (for NumPy < 2, which lacks bitwise_count)."""
    values = np.ascontiguousarray(values, dtype=np.uint64)
    per_byte = _BYTE_POPCOUNT[values.view(np.uint8)].reshape(values.shape + (8,))
    return per_byte.sum(axis=-1, dtype=np.int64)


def popcount(values: np.ndarray) -> np.ndarray:
    """Bits set per uint64 (int64 result): ``np.bitwise_count`` where available."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(values).astype(np.int64)
    return popcount_lut(values)
