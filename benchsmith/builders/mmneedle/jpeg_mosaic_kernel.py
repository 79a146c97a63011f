"""Compiled loops of :mod:`benchsmith.builders.mmneedle.jpeg_mosaic` (numba, cached on disk, GIL released).

Two loops over a baseline JPEG's entropy-coded bits, read from an *unstuffed* copy (the 0x00
after every 0xFF removed) padded with 8 zero bytes so that a peek never reads past the end:

* :func:`index_tile` walks a 4:2:0 tile's scan once and records, per row of MCUs, where the
  bits that depend on the neighbouring tile (the first luma and the two first chroma DC
  differences) sit, and the absolute DC values around them;
* :func:`write_mosaic` writes the scan of a grid of tiles: per MCU row of the mosaic, per tile,
  three re-coded DC differences and three verbatim bit ranges, byte-stuffed on the way out.

Signatures are explicit. The render runs the two entry points as native code built once from
them (:mod:`benchsmith.core.native_kernels`: loading them costs milliseconds, not numba's
0.4 s), so they allocate nothing and raise nothing: the caller passes ``pred``, three int64
of scratch. Imported, the module compiles them with numba (or loads numba's cache).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from benchsmith.core.jit import ready_numba

ready_numba()  # before the first kernel: see benchsmith.core.jit

#: columns of a tile's per-MCU-row index
Y0_AC, CB_DC, CB_AC, CR_DC, CR_AC, END = 0, 1, 2, 3, 4, 5
FIRST_Y, FIRST_CB, FIRST_CR, LAST_Y, LAST_CB, LAST_CR = 6, 7, 8, 9, 10, 11
INDEX_COLUMNS = 12

#: the kernels built as native code (benchsmith.core.native_build)
NATIVE_ENTRY_POINTS = ("index_tile", "write_mosaic")

_BYTES = nb.types.Array(nb.uint8, 1, "C", readonly=True)
_LUT = nb.types.Array(nb.int32, 1, "C", readonly=True)
_INDEX = nb.types.Array(nb.int64, 2, "C")
_PRED = nb.types.Array(nb.int64, 1, "C")  # three int64 of scratch: a DC predictor per component


@nb.njit(nb.uint32(_BYTES, nb.int64), cache=True, nogil=True)
def _peek16(bits, pos):  # pragma: no cover - compiled
    at = pos >> 3
    word = (np.uint32(bits[at]) << 16) | (np.uint32(bits[at + 1]) << 8) | np.uint32(bits[at + 2])
    return (word >> (8 - (pos & 7))) & 0xFFFF


@nb.njit(nb.int64(_BYTES, nb.int64, nb.int64), cache=True, nogil=True)
def _peek(bits, pos, n):  # pragma: no cover - compiled
    """The ``n`` (<= 32) bits at bit ``pos``, as an integer."""
    at = pos >> 3
    word = np.uint64(0)
    for k in range(5):
        word = (word << np.uint64(8)) | np.uint64(bits[at + k])
    word = word >> np.uint64(40 - (pos & 7) - n)
    return np.int64(word & np.uint64((1 << n) - 1))


@nb.njit(nb.types.UniTuple(nb.int64, 2)(_BYTES, nb.int64, _LUT), cache=True, nogil=True)
def _dc(bits, pos, lut):  # pragma: no cover - compiled
    """(DC difference, position after it); position -1 on an invalid code."""
    entry = lut[_peek16(bits, pos)]
    length = entry >> 8
    if length == 0:
        return 0, -1
    pos += length
    size = entry & 0xFF
    if size == 0:
        return 0, pos
    value = _peek(bits, pos, size)
    if value < (1 << (size - 1)):
        value -= (1 << size) - 1
    return value, pos + size


@nb.njit(nb.int64(_BYTES, nb.int64, _LUT), cache=True, nogil=True)
def _skip_ac(bits, pos, lut):  # pragma: no cover - compiled
    """The position after a block's AC coefficients; -1 on an invalid code or overrun."""
    k = 1
    while k < 64:
        entry = lut[_peek16(bits, pos)]
        length = entry >> 8
        if length == 0:
            return -1
        pos += length
        run, size = (entry >> 4) & 0xF, entry & 0xF
        if size == 0:
            if run != 15:
                return pos  # end of block
            k += 16
            continue
        k += run + 1
        pos += size
    return pos if k == 64 else -1


@nb.njit(
    nb.int64(_BYTES, nb.int64, _LUT, _LUT, _LUT, _LUT, nb.int64, nb.int64, _INDEX, _PRED),
    cache=True,
    nogil=True,
)
def index_tile(
    bits, nbits, dc_y, ac_y, dc_c, ac_c, mcu_rows, mcu_cols, index, pred
):  # pragma: no cover
    """Fill ``index`` (mcu_rows x INDEX_COLUMNS); returns 0, or -1 if the scan is not valid.

    An MCU is four luma blocks, then one Cb and one Cr block; component ``c`` of the first MCU
    of a row records its DC start (chroma only: the luma one is the row's start), its absolute
    DC value and where its AC bits start, in the columns ``*_DC + 2c``, ``FIRST_Y + c`` and
    ``Y0_AC + 2c``."""
    pos = 0
    for comp in range(3):
        pred[comp] = 0
    for row in range(mcu_rows):
        for col in range(mcu_cols):
            for block in range(6):
                comp = 0 if block < 4 else block - 3
                first = col == 0 and (block == 0 or comp > 0)
                if first and comp > 0:
                    index[row, CB_DC + 2 * (comp - 1)] = pos
                diff, pos = _dc(bits, pos, dc_y if comp == 0 else dc_c)
                if pos < 0:
                    return -1
                pred[comp] += diff
                if first:
                    index[row, FIRST_Y + comp] = pred[comp]
                    index[row, Y0_AC + 2 * comp] = pos
                pos = _skip_ac(bits, pos, ac_y if comp == 0 else ac_c)
                if pos < 0 or pos > nbits:
                    return -1
        index[row, END] = pos
        for comp in range(3):
            index[row, LAST_Y + comp] = pred[comp]
    return 0


_OUT = nb.types.Array(nb.uint8, 1, "C")
_TILES = nb.types.Array(nb.int64, 3, "C", readonly=True)
_CODES = nb.types.Array(nb.int64, 1, "C", readonly=True)


@nb.njit(
    nb.int64(
        _BYTES,
        nb.types.Array(nb.int64, 1, "C", readonly=True),
        _TILES,
        nb.types.Array(nb.int64, 1, "C", readonly=True),
        nb.int64,
        _CODES,
        _CODES,
        _CODES,
        _CODES,
        _OUT,
        _PRED,
    ),
    cache=True,
    nogil=True,
)
def write_mosaic(
    bits, starts, indexes, layout, grid, y_codes, y_sizes, c_codes, c_sizes, out, pred
):  # pragma: no cover - compiled
    """Write the scan of a ``grid`` x ``grid`` mosaic into ``out``; returns its length.

    ``bits`` holds every tile's unstuffed scan (tile ``t`` from byte ``starts[t]``),
    ``indexes[t]`` its :func:`index_tile` rows, ``layout`` the tile of each cell, row-major.
    The DC differences at tile seams are Huffman-coded again with ``*_codes``/``*_sizes``;
    everything else is copied bit for bit. Ends padded with 1 bits, as libjpeg pads.
    """
    acc = np.uint64(0)
    nacc = 0
    o = 0
    for comp in range(3):
        pred[comp] = 0
    mcu_rows = indexes.shape[1]
    for cell_row in range(grid):
        for row in range(mcu_rows):
            for cell_col in range(grid):
                tile = layout[cell_row * grid + cell_col]
                base = starts[tile] * 8
                idx = indexes[tile, row]
                for comp in range(3):
                    # the seam's DC difference, coded again against the previous tile
                    value = idx[FIRST_Y + comp] - pred[comp]
                    magnitude = -value if value < 0 else value
                    size = 0
                    while magnitude:
                        size += 1
                        magnitude >>= 1
                    if comp == 0:
                        code, length = y_codes[size], y_sizes[size]
                    else:
                        code, length = c_codes[size], c_sizes[size]
                    if value < 0:
                        value += (1 << size) - 1
                    word = (code << size) | (value & ((1 << size) - 1))
                    n = length + size
                    # then this component's bits up to the next seam-dependent difference
                    lo = idx[Y0_AC + 2 * comp]
                    hi = idx[CB_DC + 2 * comp] if comp < 2 else idx[END]
                    pos = base + lo
                    end = base + hi
                    while True:
                        acc = (acc << np.uint64(n)) | np.uint64(word)
                        nacc += n
                        while nacc >= 8:
                            nacc -= 8
                            byte = np.uint8((acc >> np.uint64(nacc)) & np.uint64(0xFF))
                            out[o] = byte
                            o += 1
                            if byte == 0xFF:
                                out[o] = 0
                                o += 1
                        acc &= np.uint64((1 << nacc) - 1)
                        if pos >= end:
                            break
                        n = min(32, end - pos)
                        word = _peek(bits, pos, n)
                        pos += n
                pred[0] = idx[LAST_Y]
                pred[1] = idx[LAST_CB]
                pred[2] = idx[LAST_CR]
    if nacc:
        pad = 8 - nacc
        byte = np.uint8(((acc << np.uint64(pad)) | np.uint64((1 << pad) - 1)) & np.uint64(0xFF))
        out[o] = byte
        o += 1
        if byte == 0xFF:
            out[o] = 0
            o += 1
    return o
