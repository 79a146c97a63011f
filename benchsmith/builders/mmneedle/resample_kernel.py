"""Compiled loops of :mod:`benchsmith.builders.mmneedle.resample` (numba, cached on disk, GIL released).

Both are written so that the innermost loop runs over contiguous memory with no branches,
which LLVM turns into SIMD: a vertical pass adds whole weighted rows into a 32-bit
accumulator row; a transpose moves 16 x 16 blocks of 32-bit pixels.

Signatures are explicit. The render runs them as native code built once from them
(:mod:`benchsmith.core.native_kernels`: its fork server loads them in milliseconds and every
worker inherits them), so they allocate nothing and raise nothing: the vertical pass takes its
accumulator row from the caller. Imported, the module compiles them with numba (or loads
numba's cache).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from benchsmith.core.jit import ready_numba

ready_numba()  # before the first kernel: see benchsmith.core.jit

PRECISION_BITS = 22
_HALF = 1 << (PRECISION_BITS - 1)
_BLOCK = 16

#: the kernels built as native code (benchsmith.core.native_build)
NATIVE_ENTRY_POINTS = ("vertical_pass", "transpose_into")


def _signatures(dtype, *rest):
    """The kernel's signature for a writable and for a read-only source array (a decoded
    image can be a read-only view of Pillow's buffer)."""
    return [
        nb.void(nb.types.Array(dtype, 2, "C", readonly=readonly), *rest)
        for readonly in (False, True)
    ]


_ROWS = nb.types.Array(nb.uint8, 2, "C")
_TABLE = (nb.types.Array(nb.int64, 2, "C"), nb.types.Array(nb.int32, 2, "C"))
_ACC = nb.types.Array(nb.int32, 1, "C")


@nb.njit(_signatures(nb.uint8, nb.int64, *_TABLE, _ROWS, _ACC), cache=True, nogil=True)
def vertical_pass(src, offset, bounds, taps, out, acc):  # pragma: no cover - compiled
    """``out[i, j] = clip((2**21 + sum_k taps[i, k] * src[bounds[i, 0] - offset + k, j]) >> 22)``
    for uint8 rows: Pillow's per-sample arithmetic, one output row at a time (``acc``: one
    int32 per column of ``out``, scratch)."""
    n_out, width = out.shape
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
def transpose_into(src, out):  # pragma: no cover - compiled
    """``out = src.T`` for 2-D uint32 arrays (one pixel per element), in cache-sized blocks."""
    rows, cols = src.shape
    for r0 in range(0, rows, _BLOCK):
        r1 = min(r0 + _BLOCK, rows)
        for c0 in range(0, cols, _BLOCK):
            c1 = min(c0 + _BLOCK, cols)
            for c in range(c0, c1):
                for r in range(r0, r1):
                    out[c, r] = src[r, c]
