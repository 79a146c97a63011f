"""Compiled loops of :mod:`benchsmith.builders.mmneedle.resample` (numba, cached on disk, GIL released).

Both are written so that the innermost loop runs over contiguous memory with no branches,
which LLVM turns into SIMD: a vertical pass adds whole weighted rows into a 32-bit
accumulator row; a transpose moves 16 x 16 blocks of 32-bit pixels.

Signatures are explicit, so the kernels are compiled (or loaded from numba's cache) when this
module is imported: the render's fork server preloads it and every worker inherits them,
instead of each worker loading them at its first image.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from benchsmith.core.jit import ready_numba

ready_numba()  # before the first kernel: see benchsmith.core.jit

PRECISION_BITS = 22
_HALF = 1 << (PRECISION_BITS - 1)
_BLOCK = 16


def _signatures(dtype, *rest):
    """The kernel's signature for a writable and for a read-only source array (a decoded
    image can be a read-only view of Pillow's buffer)."""
    return [
        nb.void(nb.types.Array(dtype, 2, "C", readonly=readonly), *rest)
        for readonly in (False, True)
    ]


_ROWS = nb.types.Array(nb.uint8, 2, "C")
_TABLE = (nb.types.Array(nb.int64, 2, "C"), nb.types.Array(nb.int32, 2, "C"))


@nb.njit(_signatures(nb.uint8, nb.int64, *_TABLE, _ROWS), cache=True, nogil=True)
def vertical_pass(src, offset, bounds, taps, out):  # pragma: no cover - compiled
    """``out[i, j] = clip((2**21 + sum_k taps[i, k] * src[bounds[i, 0] - offset + k, j]) >> 22)``
    for uint8 rows: Pillow's per-sample arithmetic, one output row at a time."""
    n_out, width = out.shape
    acc = np.empty(width, np.int32)
    for i in range(n_out):
        low = bounds[i, 0] - offset
        for j in range(width):
            acc[j] = _HALF
        for k in range(bounds[i, 1]):
            weight = taps[i, k]
            row = src[low + k]
            for j in range(width):
                acc[j] += np.int32(row[j]) * weight
        line = out[i]
        for j in range(width):
            value = acc[j] >> PRECISION_BITS
            line[j] = min(max(value, 0), 255)


@nb.njit(_signatures(nb.uint32, nb.types.Array(nb.uint32, 2, "C")), cache=True, nogil=True)
def _transpose_into(src, out):  # pragma: no cover - compiled
    rows, cols = src.shape
    for r0 in range(0, rows, _BLOCK):
        r1 = min(r0 + _BLOCK, rows)
        for c0 in range(0, cols, _BLOCK):
            c1 = min(c0 + _BLOCK, cols)
            for c in range(c0, c1):
                for r in range(r0, r1):
                    out[c, r] = src[r, c]


def transpose_pixels(units: np.ndarray) -> np.ndarray:
    """A contiguous transpose of a 2-D uint32 array (one pixel per element)."""
    out = np.empty((units.shape[1], units.shape[0]), np.uint32)
    _transpose_into(np.ascontiguousarray(units), out)
    return out
