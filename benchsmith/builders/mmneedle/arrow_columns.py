"""Arrow columns to and from numpy through their buffers, never through pandas.

Why: pyarrow imports pandas (0.2-0.3 s) behind ``pa.array`` on Python or numpy values and
behind every ``to_numpy``, to check for pandas objects. The render reads its plan and writes
its outputs with pyarrow and imports neither pandas nor polars, so every column it touches
goes through these: its values are plain buffers of fixed-width numbers or UTF-8 bytes.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa


def string_array(values: list[str]) -> pa.Array:
    """A string column built from its buffers, as ``pa.array(values, pa.string())`` builds it."""
    encoded = [value.encode() for value in values]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int32)
    np.cumsum([len(data) for data in encoded], out=offsets[1:])
    buffers = [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    return pa.Array.from_buffers(pa.string(), len(encoded), buffers)


def int64_array(values: np.ndarray) -> pa.Array:
    """An int64 column without nulls, sharing ``values``' memory."""
    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), len(values), [None, pa.py_buffer(values)])


def int64_values(array: pa.Array) -> np.ndarray:
    """The values of an int64 column without nulls (a read-only view of its buffer)."""
    if not pa.types.is_int64(array.type) or array.null_count:
        raise ValueError(f"expected int64 values without nulls, got {array.type}")
    data = np.frombuffer(array.buffers()[1], dtype=np.int64)
    return data[array.offset : array.offset + len(array)]


def list_lengths(array: pa.Array) -> np.ndarray:
    """The number of values in each entry of a list or large-list column (its offsets' steps)."""
    width = np.int64 if pa.types.is_large_list(array.type) else np.int32
    offsets = np.frombuffer(array.buffers()[1], dtype=width)
    return np.diff(offsets[array.offset : array.offset + len(array) + 1])


def list_values(array: pa.Array) -> pa.Array:
    """The values of a list or large-list column's entries, in order: ``array.flatten()``
    without pyarrow.compute, which ``flatten`` imports (37 ms of a render's start-up)."""
    width = np.int64 if pa.types.is_large_list(array.type) else np.int32
    offsets = np.frombuffer(array.buffers()[1], dtype=width)
    first, last = int(offsets[array.offset]), int(offsets[array.offset + len(array)])
    return array.values.slice(first, last - first)
