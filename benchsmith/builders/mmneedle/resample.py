"""Pillow's convolution resize, to the byte, about four times faster.

Why: resizing every COCO source to its 256 px cell cost more than decoding it (Pillow's
resampler is scalar C, and an RGB ``Image`` stores 4 bytes per pixel, so a NumPy round trip
copies twice). The MMNeedle render must keep Pillow's pixels (the legacy order reproduces the
original's bytes, and the canonical cells are recorded by hash), so this module reimplements
Pillow's algorithm exactly rather than using another resampler:

- the same coefficients (``precompute_coeffs``: filter support scaled by the reduction,
  weights normalised to sum 1, then rounded to 22-bit fixed point as ``normalize_coeffs_8bpc``
  does, computed here in double precision with the same operations);
- the same integer arithmetic (a 32-bit accumulator starting at half a unit, shifted down by
  22 bits and clipped to 0..255), the same two passes with an 8-bit image between them, and
  the same pass order (Pillow 13 runs the vertical pass first when the height shrinks by more
  than twice as much as the width; older versions always start horizontally);
- pixels as RGBX (what Pillow itself stores), so both passes treat a pixel as one 32-bit unit.

What is different is the memory layout: both passes run as *vertical* passes (each output row a
weighted sum of whole input rows, which the compiler vectorises), and the horizontal one gets
there through a 32-bit transpose. :func:`matches_installed_pillow` compares the two on shapes
that exercise both pass orders, and callers use this path only when it agrees
(``tests/builders/mmneedle/test_resample.py`` compares hundreds of random shapes and every filter).
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np

PRECISION_BITS = 22  # Pillow: 32 - 8 - 2

#: filter name -> (support, weight function), as Pillow's Resample.c defines them
FILTERS = ("box", "bilinear", "hamming", "bicubic", "lanczos")


def _box(x: float) -> float:
    return 1.0 if -0.5 < x <= 0.5 else 0.0


def _bilinear(x: float) -> float:
    x = -x if x < 0.0 else x
    return 1.0 - x if x < 1.0 else 0.0


_HAMMING_A = float(np.float32(0.54))  # Pillow writes 0.54f and 0.46f: single-precision constants
_HAMMING_B = float(np.float32(0.46))


def _hamming(x: float) -> float:
    x = -x if x < 0.0 else x
    if x == 0.0:
        return 1.0
    if x >= 1.0:
        return 0.0
    x = x * math.pi
    return math.sin(x) / x * (_HAMMING_A + _HAMMING_B * math.cos(x))


def _bicubic(x: float) -> float:
    a = -0.5
    x = -x if x < 0.0 else x
    if x < 1.0:
        return ((a + 2.0) * x - (a + 3.0)) * x * x + 1
    if x < 2.0:
        return (((x - 5) * x + 8) * x - 4) * a
    return 0.0


def _sinc(x: float) -> float:
    if x == 0.0:
        return 1.0
    x = x * math.pi
    return math.sin(x) / x


def _lanczos(x: float) -> float:
    return _sinc(x) * _sinc(x / 3) if -3.0 <= x < 3.0 else 0.0


_FILTER = {
    "box": (0.5, _box),
    "bilinear": (1.0, _bilinear),
    "hamming": (1.0, _hamming),
    "bicubic": (2.0, _bicubic),
    "lanczos": (3.0, _lanczos),
}


@cache
def coefficients(in_size: int, out_size: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(bounds, taps) for resizing ``in_size`` samples to ``out_size``: output ``i`` reads input
    ``bounds[i, 0] + k`` for ``k < bounds[i, 1]`` with 22-bit fixed-point weight ``taps[i, k]``.
    Cached: a build sees few distinct source sizes."""
    support0, weight = _FILTER[name]
    scale = float(in_size) / out_size
    filterscale = max(scale, 1.0)
    support = support0 * filterscale
    ksize = int(math.ceil(support)) * 2 + 1
    inverse = 1.0 / filterscale
    bounds = np.zeros((out_size, 2), np.int64)
    taps = np.zeros((out_size, ksize), np.int32)
    unit = 1 << PRECISION_BITS
    for i in range(out_size):
        center = (i + 0.5) * scale
        low = max(int(center - support + 0.5), 0)
        count = min(int(center + support + 0.5), in_size) - low
        weights = [weight((x + low - center + 0.5) * inverse) for x in range(count)]
        total = 0.0
        for w in weights:
            total += w
        if total != 0.0:
            weights = [w / total for w in weights]
        for k, w in enumerate(weights):
            taps[i, k] = int(-0.5 + w * unit) if w < 0 else int(0.5 + w * unit)
        bounds[i] = (low, count)
    return bounds, taps  # shared by every caller: read, never written


def _pillow_major() -> int:
    from PIL import __version__

    return int(__version__.split(".")[0])


def vertical_first(in_w: int, in_h: int, out_w: int, out_h: int) -> bool:
    """Pillow's pass order (``ImagingResampleInner``): from Pillow 13, the vertical pass goes
    first when the height shrinks by more than twice as much as the width."""
    if _pillow_major() < 13:
        return False
    return (in_h - out_h) > 0 and (in_h - out_h) > (in_w - out_w) * 2


def _as_units(pixels: np.ndarray) -> np.ndarray:
    """An (h, w, 4) uint8 array viewed as (h, w) uint32: one unit per pixel."""
    return pixels.view(np.uint32).reshape(pixels.shape[0], pixels.shape[1])


def _as_bytes(units: np.ndarray) -> np.ndarray:
    """An (h, w) uint32 array viewed as (h, w * 4) uint8 rows."""
    return units.view(np.uint8).reshape(units.shape[0], units.shape[1] * 4)


KERNELS = "benchsmith.builders.mmneedle.resample_kernel"


def _kernels() -> Any:
    """The compiled passes, loaded when a resize first runs (native code:
    :mod:`benchsmith.core.native_kernels`)."""
    from benchsmith.core.native_kernels import load_kernels

    return load_kernels(KERNELS)


def _transpose(units: np.ndarray) -> np.ndarray:
    """A contiguous transpose of a 2-D uint32 array (one pixel per element)."""
    out = np.empty((units.shape[1], units.shape[0]), np.uint32)
    _kernels().transpose_into(np.ascontiguousarray(units), out)
    return out


def _pass(rows: np.ndarray, offset: int, bounds, taps, out: np.ndarray) -> None:
    """One vertical pass of uint32 pixels (``rows`` into ``out``), on their bytes."""
    out_bytes = _as_bytes(out)
    accumulator = np.empty(out_bytes.shape[1], np.int32)
    _kernels().vertical_pass(_as_bytes(rows), offset, bounds, taps, out_bytes, accumulator)


def _horizontal(units: np.ndarray, row0: int, rows: int, bounds, taps) -> np.ndarray:
    """Resize rows ``row0 .. row0 + rows`` of ``units`` along x: transpose, resize the columns
    as rows, transpose back."""
    columns = _transpose(units[row0 : row0 + rows])
    resized = np.empty((bounds.shape[0], rows), np.uint32)
    _pass(columns, 0, bounds, taps, resized)
    return _transpose(resized)


def _vertical(units: np.ndarray, offset: int, bounds, taps) -> np.ndarray:
    out = np.empty((bounds.shape[0], units.shape[1]), np.uint32)
    _pass(units, offset, bounds, taps, out)
    return out


def resize_rgbx(pixels: np.ndarray, width: int, height: int, name: str = "bicubic") -> np.ndarray:
    """``Image.resize((width, height), name)`` of an RGBX image held as an (h, w, 4) uint8
    array, without Pillow: returns a new (height, width, 4) uint8 array (the fourth byte is
    whatever Pillow would leave there: filtered like the others, and ignored)."""
    if pixels.ndim != 3 or pixels.shape[2] != 4 or pixels.dtype != np.uint8:
        raise ValueError(f"expected an (h, w, 4) uint8 array, got {pixels.shape} {pixels.dtype}")
    if name not in _FILTER:
        raise ValueError(f"unknown filter {name!r}; expected one of {', '.join(FILTERS)}")
    if width < 1 or height < 1:
        raise ValueError(f"size must be positive, got {width}x{height}")
    in_h, in_w = pixels.shape[:2]
    units = _as_units(np.ascontiguousarray(pixels))
    need_h, need_v = width != in_w, height != in_h
    if need_h:
        hb, ht = coefficients(in_w, width, name)
    if need_v:
        vb, vt = coefficients(in_h, height, name)
    if not (need_h or need_v):
        out = units.copy()
    elif not need_v:
        out = _horizontal(units, 0, in_h, hb, ht)
    elif not need_h:
        out = _vertical(units, 0, vb, vt)
    elif vertical_first(in_w, in_h, width, height):
        out = _horizontal(_vertical(units, 0, vb, vt), 0, height, hb, ht)
    else:  # Pillow resizes only the rows the vertical pass reads, then shifts its bounds
        first = int(vb[0, 0])
        last = int(vb[-1, 0] + vb[-1, 1])
        out = _vertical(_horizontal(units, first, last - first, hb, ht), first, vb, vt)
    return out.view(np.uint8).reshape(height, width, 4)


@cache
def matches_installed_pillow(name: str = "bicubic") -> bool:
    """Whether :func:`resize_rgbx` gives the installed Pillow's bytes for ``name`` on shapes
    that take every branch (each pass alone, both pass orders, reductions and enlargements).
    Callers fall back to Pillow when it does not (a Pillow whose algorithm changed)."""
    from PIL import Image

    rng = np.random.default_rng(20261126)
    cases = ((37, 23, 11, 9), (23, 37, 9, 11), (64, 48, 16, 16), (48, 64, 16, 16), (9, 5, 20, 7))
    cases += ((30, 30, 12, 30), (30, 30, 30, 12), (5, 9, 13, 17))
    cases += ((40, 90, 30, 20),)  # vertical pass first (Pillow 13)
    for in_w, in_h, out_w, out_h in cases:
        pixels = rng.integers(0, 256, (in_h, in_w, 4), dtype=np.uint8)
        image = Image.fromarray(np.ascontiguousarray(pixels[..., :3]))
        expected = np.asarray(image.resize((out_w, out_h), getattr(Image.Resampling, name.upper())))
        if not np.array_equal(resize_rgbx(pixels, out_w, out_h, name)[..., :3], expected):
            return False
    return True
