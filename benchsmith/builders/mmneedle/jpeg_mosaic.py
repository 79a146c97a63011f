"""Stitch JPEG tiles into one JPEG without encoding the stitched pixels again.

Why: a stitched MMNeedle image is a grid of cells, and each source cell appears in many
stitched images (about 16 in a 4x4 pool, 64 in an 8x8 one). Encoding every stitched canvas
runs colour conversion, chroma downsampling, the DCT and quantisation over every cell again
each time; that encode was most of the render's time.

In a baseline JPEG with 4:2:0 chroma (what Pillow writes by default), every one of those steps
works inside one 16 x 16 MCU: colour conversion per pixel, downsampling per 2 x 2 block (its
rounding bias alternates with the column, which cells of even width keep in step), the DCT and
quantisation per 8 x 8 block. When the cell size is a multiple of 16, the stitched JPEG's
quantised coefficients are therefore exactly those of its cells encoded alone. What is not
local is the entropy coding: each block's DC coefficient is coded as the difference from the
previous block of its component, in MCU order across the whole image. So a tile is
entropy-coded once (by Pillow, on its own), its scan is indexed once (``index_tile``:
where, in each row of MCUs, the three differences that depend on the previous tile sit), and a
mosaic's scan is written by copying each tile's MCU rows bit for bit and coding those three
differences again (``write_mosaic``). The header is Pillow's own, from encoding a blank
canvas of the mosaic's size with the same settings.

The result is the JPEG Pillow writes for the pasted canvas, byte for byte.
:func:`matches_installed_pillow` checks that on random tiles before a caller relies on it.
"""

from __future__ import annotations

import io
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from PIL import Image

MCU = 16  # 4:2:0: one MCU is 16 x 16 pixels
# columns of a tile's per-MCU-row index, as the kernels lay it out (jpeg_mosaic_kernel's
# INDEX_COLUMNS; a test holds them equal): written here so that the render's parent sizes the
# cache slots without the kernels, which only its workers need
INDEX_COLUMNS = 12


KERNELS = "benchsmith.builders.mmneedle.jpeg_mosaic_kernel"


def _kernel() -> Any:
    """The compiled kernels, loaded on first use (native code: :mod:`benchsmith.core.native_kernels`),
    which a process that imports the renderer only to publish or audit rows never loads."""
    from benchsmith.core.native_kernels import load_kernels

    return load_kernels(KERNELS)


_PAD = 8  # zero bytes after an unstuffed scan, so the kernels' 5-byte peeks stay in bounds


class MosaicUnsupported(ValueError):
    """The JPEG is not one a mosaic can be made of (not baseline 4:2:0, restart markers...)."""


@dataclass(frozen=True)
class _Parsed:
    header: bytes  # everything before the entropy-coded data
    scan: bytes  # the entropy-coded data, still byte-stuffed, without EOI
    width: int
    height: int
    huffman: dict[tuple[int, int], tuple[bytes, bytes]]  # (class, id) -> (counts, symbols)
    selectors: tuple[tuple[int, int], ...]  # per component in the scan: (DC table, AC table)


def _parse(data: bytes) -> _Parsed:
    """The parts of a baseline, 3-component, 4:2:0, non-restart JPEG; MosaicUnsupported else."""
    if data[:2] != b"\xff\xd8" or data[-2:] != b"\xff\xd9":
        raise MosaicUnsupported("not a complete JPEG")
    try:
        return _parse_segments(data)
    except (IndexError, struct.error) as exc:
        raise MosaicUnsupported("a malformed JPEG header") from exc


def _parse_segments(data: bytes) -> _Parsed:
    pos, huffman = 2, {}
    size = sampling = None
    while True:
        if data[pos] != 0xFF:
            raise MosaicUnsupported("marker expected")
        marker = data[pos + 1]
        (length,) = struct.unpack(">H", data[pos + 2 : pos + 4])
        body = data[pos + 4 : pos + 2 + length]
        if marker == 0xC4:
            at = 0
            while at < len(body):
                counts = body[at + 1 : at + 17]
                n = sum(counts)
                huffman[body[at] >> 4, body[at] & 0xF] = (counts, body[at + 17 : at + 17 + n])
                at += 17 + n
        elif marker == 0xC0:
            height, width, components = struct.unpack(">HHB", body[1:6])
            factors = tuple(body[7 + 3 * k] for k in range(components))
            size, sampling = (width, height), factors
        elif marker in (0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            raise MosaicUnsupported("not a baseline JPEG")
        elif marker == 0xDD:
            raise MosaicUnsupported("restart markers")
        elif marker == 0xDA:
            count = body[0]
            selectors = tuple((body[2 + 2 * k] >> 4, body[2 + 2 * k] & 0xF) for k in range(count))
            scan_start = pos + 2 + length
            break
        pos += 2 + length
    if size is None or sampling != (0x22, 0x11, 0x11) or len(selectors) != 3:
        raise MosaicUnsupported("not a 3-component 4:2:0 JPEG")
    if selectors[1] != selectors[2]:
        raise MosaicUnsupported("Cb and Cr coded with different Huffman tables")
    return _Parsed(data[:scan_start], data[scan_start:-2], size[0], size[1], huffman, selectors)


def _lookup(counts: bytes, symbols: bytes) -> np.ndarray:
    """A 16-bit-lookahead decoding table: entry = (code length << 8) | symbol, 0 if invalid."""
    table = np.zeros(1 << 16, np.int32)
    code, k = 0, 0
    for length in range(1, 17):
        for _ in range(counts[length - 1]):
            span = 1 << (16 - length)
            table[code * span : (code + 1) * span] = (length << 8) | symbols[k]
            code, k = code + 1, k + 1
        code <<= 1
    table.flags.writeable = False
    return table


def _codes(counts: bytes, symbols: bytes) -> tuple[np.ndarray, np.ndarray]:
    """Encoding tables (code, length) indexed by symbol, for the DC size categories."""
    codes, sizes = np.zeros(256, np.int64), np.zeros(256, np.int64)
    code, k = 0, 0
    for length in range(1, 17):
        for _ in range(counts[length - 1]):
            codes[symbols[k]], sizes[symbols[k]] = code, length
            code, k = code + 1, k + 1
        code <<= 1
    codes.flags.writeable = sizes.flags.writeable = False
    return codes, sizes


def _unstuff(scan: bytes) -> np.ndarray:
    """The scan's bits as bytes, without the 0x00 stuffed after each 0xFF, zero-padded."""
    raw = np.frombuffer(scan, np.uint8)
    ff = np.flatnonzero(raw[:-1] == 0xFF)
    if ff.size and (raw[ff + 1] != 0).any():
        raise MosaicUnsupported("a marker inside the scan")
    keep = np.ones(raw.size, bool)
    keep[ff + 1] = False
    bits = np.zeros(int(keep.sum()) + _PAD, np.uint8)
    bits[: bits.size - _PAD] = raw[keep]
    return bits


@dataclass(frozen=True)
class Tile:
    """One cell's scan, unstuffed and zero-padded (``bits``), and its per-MCU-row index."""

    bits: np.ndarray
    index: np.ndarray  # int64, (side // 16) x INDEX_COLUMNS


def _tables(parsed: _Parsed) -> tuple[np.ndarray, ...]:
    """Decoding and DC encoding tables for a JPEG's Huffman segments."""
    used = sorted({(0, s[0]) for s in parsed.selectors} | {(1, s[1]) for s in parsed.selectors})
    return _tables_of(tuple((key, parsed.huffman[key]) for key in used), parsed.selectors)


@cache
def _tables_of(
    huffman: tuple[tuple[tuple[int, int], tuple[bytes, bytes]], ...],
    selectors: tuple[tuple[int, int], ...],
) -> tuple[np.ndarray, ...]:
    """Cached per process by the Huffman tables themselves, not by the whole header: JPEGs of
    every size share them (Pillow's standard tables), and each lookup table is 65,536 entries
    built in Python."""
    (ydc, yac), (cdc, cac), _ = selectors
    h = dict(huffman)
    return (
        _lookup(*h[0, ydc]),
        _lookup(*h[1, yac]),
        _lookup(*h[0, cdc]),
        _lookup(*h[1, cac]),
        *_codes(*h[0, ydc]),
        *_codes(*h[0, cdc]),
    )


def tile_from_jpeg(data: bytes) -> Tile:
    """Index a square JPEG tile (baseline, 4:2:0, side a multiple of 16) for mosaics."""
    parsed = _parse(data)
    if parsed.width != parsed.height or parsed.width % MCU:
        raise MosaicUnsupported("a tile must be square with a side that is a multiple of 16")
    dc_y, ac_y, dc_c, ac_c, *_ = _tables(parsed)
    bits = _unstuff(parsed.scan)
    rows = parsed.width // MCU
    index = np.zeros((rows, INDEX_COLUMNS), np.int64)
    bits.flags.writeable = False
    nbits = (bits.size - _PAD) * 8
    pred = np.zeros(3, np.int64)
    if _kernel().index_tile(bits, nbits, dc_y, ac_y, dc_c, ac_c, rows, rows, index, pred) != 0:
        raise MosaicUnsupported("the scan does not decode")
    return Tile(bits, index)


def encode_tile(cell: np.ndarray, quality: int) -> bytes:
    """A cell (RGB or RGBX pixels) as Pillow encodes it, alone."""
    mode = "RGBX" if cell.shape[2] == 4 else "RGB"
    image = Image.frombuffer(mode, (cell.shape[1], cell.shape[0]), cell, "raw", mode, 0, 1)
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=quality)
    return buffer.getvalue()


def mosaic_header(side: int, quality: int) -> bytes:
    """The bytes Pillow writes before the scan of a side x side JPEG at ``quality``."""
    return _mosaic_setup(side, quality)[0]


@cache
def _mosaic_setup(side: int, quality: int) -> tuple[bytes, tuple[np.ndarray, ...]]:
    """A side x side mosaic's header and its DC encoding tables (once per size and quality)."""
    parsed = _parse(encode_tile(np.zeros((side, side, 3), np.uint8), quality))
    return parsed.header, _tables(parsed)[4:]


def write_mosaic_jpeg(
    bits: np.ndarray,
    starts: np.ndarray,
    indexes: np.ndarray,
    layout: Sequence[int] | np.ndarray,
    grid: int,
    tile_side: int,
    quality: int,
) -> bytes:
    """The JPEG of a grid of tiles, row-major by ``layout`` (tile numbers).

    ``bits`` holds the tiles' unstuffed scans (tile t from byte ``starts[t]``, zero-padded at
    the very end), ``indexes[t]`` their index rows: the layout a cell cache stores them in.
    """
    if len(layout) != grid * grid:
        raise ValueError(f"a {grid}x{grid} mosaic needs {grid * grid} tiles, got {len(layout)}")
    header, (y_codes, y_sizes, c_codes, c_sizes) = _mosaic_setup(grid * tile_side, quality)
    used = np.asarray(layout, np.int64)
    # the tiles' bits, plus up to 3 x 32 bits of seam differences per tile and MCU row
    seams = len(used) * indexes.shape[1] * 12
    scan_bytes = int(indexes[used, -1, 5].sum()) // 8 + seams + 8
    out = np.empty(len(header) + 2 * scan_bytes + 2, np.uint8)  # stuffing at most doubles
    out[: len(header)] = np.frombuffer(header, np.uint8)
    body = out[len(header) :]
    pred = np.zeros(3, np.int64)
    n = _kernel().write_mosaic(
        bits, starts, indexes, used, grid, y_codes, y_sizes, c_codes, c_sizes, body, pred
    )
    body[n : n + 2] = (0xFF, 0xD9)
    return out[: len(header) + n + 2].tobytes()


@dataclass(frozen=True)
class TileSet:
    """Tiles laid out for :func:`write_mosaic_jpeg` once, so that any number of mosaics can be
    written from them: every scan in one buffer (tile t from byte ``starts[t]``) and the
    indexes stacked."""

    bits: np.ndarray
    starts: np.ndarray
    indexes: np.ndarray
    side: int

    @classmethod
    def of(cls, scans: list[np.ndarray], indexes: list[np.ndarray], side: int) -> TileSet:
        sizes = np.array([scan.size for scan in scans], np.int64)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        bits = np.zeros(int(sizes.sum()) + _PAD, np.uint8)
        for start, scan in zip(starts.tolist(), scans, strict=True):
            bits[start : start + scan.size] = scan
        bits.flags.writeable = False
        return cls(bits, starts, np.ascontiguousarray(np.stack(indexes)), side)

    @classmethod
    def from_tiles(cls, tiles: list[Tile]) -> TileSet:
        scans = [t.bits[: t.bits.size - _PAD] for t in tiles]
        return cls.of(scans, [t.index for t in tiles], tiles[0].index.shape[0] * MCU)

    @classmethod
    def from_packed(cls, packed: list[np.ndarray], side: int) -> TileSet:
        """Tiles as :func:`pack_tile` wrote them (e.g. returned by remote tasks)."""
        head = index_bytes(side)
        rows = side // MCU
        indexes = [np.frombuffer(p[:head].tobytes(), np.int64).reshape(rows, -1) for p in packed]
        return cls.of([p[head:] for p in packed], indexes, side)

    def mosaic(self, layout: list[int] | tuple[int, ...], grid: int, quality: int) -> bytes:
        """The JPEG of ``grid * grid`` of these tiles, row-major by ``layout``."""
        return write_mosaic_jpeg(
            self.bits, self.starts, self.indexes, layout, grid, self.side, quality
        )


def mosaic_of(tiles: list[Tile], grid: int, quality: int) -> bytes:
    """The JPEG of ``grid * grid`` tiles, row-major (each a :class:`Tile` in memory)."""
    return TileSet.from_tiles(tiles).mosaic(range(len(tiles)), grid, quality)


@cache
def matches_installed_pillow(quality: int) -> bool:
    """Whether mosaics equal the installed Pillow's encode of the pasted canvas, on random
    tiles (noise, flat, gradients: large and zero DC differences at the seams) at 2x2 and 3x3.
    Callers encode canvases when it does not (a Pillow that writes JPEGs differently)."""
    rng = np.random.default_rng(20261126)
    for grid, side in ((2, 32), (3, 16), (2, 48)):
        cells = [rng.integers(0, 256, (side, side, 3), dtype=np.uint8) for _ in range(grid * grid)]
        cells[0][:] = 255
        cells[-1][:] = np.linspace(0, 255, side, dtype=np.uint8)[:, None, None]
        canvas = np.zeros((grid * side, grid * side, 3), np.uint8)
        for k, cell in enumerate(cells):
            r, c = divmod(k, grid)
            canvas[r * side : (r + 1) * side, c * side : (c + 1) * side] = cell
        try:
            tiles = [tile_from_jpeg(encode_tile(cell, quality)) for cell in cells]
        except MosaicUnsupported:
            return False
        if mosaic_of(tiles, grid, quality) != encode_tile(canvas, quality):
            return False
    return True


# --- tiles in fixed-size slots of one buffer (a cell cache) ---------------------------------


def index_bytes(side: int) -> int:
    """Bytes of a tile's index at the start of its slot."""
    return (side // MCU) * INDEX_COLUMNS * 8


def slot_bytes(side: int) -> int:
    """Bytes a slot reserves for one side x side tile: its index, then its bits.

    Bounded by the largest scan a baseline encoder can write, not by what tiles usually need:
    an 8 x 8 block codes at most 63 AC values of 26 bits and one DC of 22, so a 16 x 16 MCU
    (six blocks) never exceeds 1,245 bytes, under 5 bytes a pixel. Slots are rounded to 4 KiB,
    and only their used part is ever written (the file stays sparse).
    """
    need = index_bytes(side) + 5 * side * side + _PAD
    return -(-need // 4096) * 4096


def pack_tile(tile: Tile) -> np.ndarray:
    """A tile as the bytes of its slot's used part: index (int64), then the unstuffed bits."""
    used = tile.bits.size - _PAD
    packed = np.empty(tile.index.nbytes + used, np.uint8)
    packed[: tile.index.nbytes] = tile.index.reshape(-1).view(np.uint8)
    packed[tile.index.nbytes :] = tile.bits[:used]
    return packed


def cell_tile(cell: np.ndarray, quality: int) -> np.ndarray:
    """A cell's JPEG tile, packed (:func:`pack_tile`): what a cell cache slot holds."""
    packed = pack_tile(tile_from_jpeg(encode_tile(cell, quality)))
    if packed.size + _PAD > slot_bytes(cell.shape[0]):  # cannot happen: see slot_bytes
        raise ValueError(f"a {cell.shape[0]} px JPEG tile overflows its cache slot")
    return packed


def mosaic_from_slots(
    slots: np.ndarray, layout: list[int] | tuple[int, ...], grid: int, side: int, quality: int
) -> bytes:
    """The JPEG of ``grid * grid`` tiles read in place from ``slots`` (n x slot_bytes(side),
    as :func:`pack_tile` wrote them), row-major by ``layout`` (slot numbers)."""
    head = index_bytes(side)
    used = np.asarray(layout, np.int64)
    indexes = np.ascontiguousarray(slots[used, :head]).view(np.int64)
    indexes = indexes.reshape(len(used), side // MCU, INDEX_COLUMNS)
    flat = slots.reshape(-1)
    if flat.flags.writeable:
        flat = flat.view()
        flat.flags.writeable = False
    starts = used * slots.shape[1] + head
    order = np.arange(len(used), dtype=np.int64)
    return write_mosaic_jpeg(flat, starts, indexes, order, grid, side, quality)
