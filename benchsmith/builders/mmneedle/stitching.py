"""Image stitching: decode a source once, resize it to a cell, paste cells on a grid, encode.

The functions here are pure (bytes in, bytes out) so the render step, the audit and the
benchmarks share exactly the same pixels. ``load_cell`` is the expensive part (decode +
resize), which is why the render step runs it once per source image and caches the result
(see :mod:`benchsmith.builders.mmneedle.cell_cache`) instead of once per cell as the original did.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from benchsmith.builders.mmneedle.resample import FILTERS, matches_installed_pillow, resize_rgbx
from benchsmith.core.errors import SourceError
from benchsmith.images.decode import decode_rgb as decode_image
from benchsmith.images.decode import decode_rgbx

COCO_FIX = (
    "the file is corrupt or truncated: re-extract it from val2014.zip "
    "(`benchsmith source fetch coco`)"
)

RESAMPLE = {
    "nearest": Image.Resampling.NEAREST,
    "box": Image.Resampling.BOX,
    "bilinear": Image.Resampling.BILINEAR,
    "hamming": Image.Resampling.HAMMING,
    "bicubic": Image.Resampling.BICUBIC,
    "lanczos": Image.Resampling.LANCZOS,
}


def decode_rgb(data: bytes, path: str | Path) -> Image.Image:
    """Fully decode an image to RGB, strictly (:mod:`benchsmith.images.decode`): a corrupt or
    truncated file raises a SourceError naming it and how to get it again."""
    return decode_image(data, path, fix=COCO_FIX)


def resize_cell(
    image: Image.Image, cell_size: int, resample: str = "bicubic", reducing_gap: float | None = None
) -> np.ndarray:
    """Resize to a square cell ignoring aspect ratio (as the original does); HxWx3 uint8."""
    if image.size != (cell_size, cell_size):
        image = image.resize((cell_size, cell_size), RESAMPLE[resample], reducing_gap=reducing_gap)
    return np.asarray(image, dtype=np.uint8)


def exact_fast_resize(resample: str, reducing_gap: float | None) -> bool:
    """Whether cells can be resized by :func:`benchsmith.builders.mmneedle.resample.resize_rgbx`
    (Pillow's pixels, ~4x faster): a convolution filter, no ``reducing_gap`` (Pillow's
    ``reduce()`` shortcut is not reimplemented) and agreement with the installed Pillow."""
    return reducing_gap is None and resample in FILTERS and matches_installed_pillow(resample)


def load_cell(
    path: str | Path, cell_size: int, resample: str = "bicubic", reducing_gap: float | None = None
) -> tuple[np.ndarray, bytes]:
    """Read, decode and resize one source file; returns (cell pixels, raw file bytes).

    The pixels are those of ``resize_cell(decode_rgb(...))`` byte for byte; when
    :func:`exact_fast_resize` allows, they are computed without Pillow's resampler."""
    data = _read_source(path)
    return _resized(data, path, cell_size, resample, reducing_gap, channels=3), data


def load_cell_rgbx(
    path: str | Path, cell_size: int, resample: str = "bicubic", reducing_gap: float | None = None
) -> tuple[np.ndarray, bytes]:
    """:func:`load_cell` with a fourth, unused byte per pixel (cell x cell x 4): the layout
    Pillow keeps RGB in, so a canvas of such cells becomes an image without a copy."""
    data = _read_source(path)
    return _resized(data, path, cell_size, resample, reducing_gap, channels=4), data


def _read_source(path: str | Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError as exc:
        raise SourceError(
            "source image file is missing",
            path=path,
            fix="check --images points at the val2014 folder, or re-extract val2014.zip",
        ) from exc


def _resized(
    data: bytes,
    path: str | Path,
    cell_size: int,
    resample: str,
    reducing_gap: float | None,
    channels: int,
) -> np.ndarray:
    if exact_fast_resize(resample, reducing_gap):
        pixels = decode_rgbx(data, path, fix=COCO_FIX)
        cell = resize_rgbx(pixels, cell_size, cell_size, resample)
        return cell if channels == 4 else np.ascontiguousarray(cell[..., :3])
    cell = resize_cell(decode_rgb(data, path), cell_size, resample, reducing_gap)
    return np.asarray(Image.fromarray(cell).convert("RGBX")) if channels == 4 else cell


def render_stitched_image(
    cells: Sequence[np.ndarray], grid: int, canvas: np.ndarray | None = None
) -> Image.Image:
    """Paste ``grid*grid`` equal square cells row-major on a black canvas.

    Cell k goes to row k // grid (y) and column k % grid (x). Cells are RGB (h, w, 3) or RGBX
    (h, w, 4); an RGBX canvas becomes an "RGBX" image that shares its memory (Pillow maps it
    instead of converting 12.6 MB per 8x8 image) and encodes to the same JPEG bytes as RGB.
    Render workers pass a canvas they reuse between images (cells cover it fully).
    """
    if len(cells) != grid * grid:
        raise ValueError(f"expected {grid * grid} cells, got {len(cells)}")
    size, channels = cells[0].shape[0], cells[0].shape[2]
    if canvas is None:
        canvas = np.zeros((grid * size, grid * size, channels), dtype=np.uint8)
    for k, cell in enumerate(cells):
        row, col = divmod(k, grid)
        canvas[row * size : (row + 1) * size, col * size : (col + 1) * size] = cell
    mode = "RGBX" if channels == 4 else "RGB"
    return Image.frombuffer(mode, (canvas.shape[1], canvas.shape[0]), canvas, "raw", mode, 0, 1)


def encode_jpeg(image: Image.Image, quality: int = 75) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=quality)
    return buffer.getvalue()
