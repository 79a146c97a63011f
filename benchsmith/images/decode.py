"""Decode an image strictly: a damaged file is an error naming it, never a silently wrong image.

Pillow alone lets two kinds of damage through: a JPEG whose entropy-coded data ends early but
carries an end marker decodes to a half-grey picture without a word, and an image whose header
claims a huge size only triggers a warning (or, past twice the limit, a bare
``DecompressionBombError``). Here:

- a JPEG is decoded strictly by libjpeg-turbo through ``simplejpeg``, which raises on
  "premature end of data segment" and other recoverable corruption. A YCbCr or greyscale JPEG
  (what cameras and COCO write) is decoded once, by simplejpeg, to RGB: the same library with
  the same settings as Pillow's decoder (integer IDCT, smooth chroma upsampling), so the pixels
  are Pillow's to the byte (``tests/images/test_decode.py`` compares them over subsamplings,
  progressive, restart markers, odd sizes) in about half the time of checking and then decoding
  with Pillow. Other JPEGs (CMYK, YCCK) are checked at 1/8 scale (every entropy-coded block is
  still read) and decoded by Pillow, whose CMYK conversion simplejpeg does not have;
- an image larger than :func:`benchsmith.core.limits.max_pixels` (``images.max_pixels`` in
  params.yaml) is refused before it is decoded;
- every other failure (unknown format, truncated file) is an error too.

Messages name the file and carry no memory address (Pillow names in-memory files by their
repr), so an error recorded as evidence is the same on every run.
"""

from __future__ import annotations

import io
import re
import warnings
from pathlib import Path

import numpy as np
from PIL import Image, UnidentifiedImageError

from benchsmith.core.errors import SourceError
from benchsmith.core.limits import max_pixels

CORRUPT_FIX = "the image is corrupt or truncated: fetch or extract the source file again"


def _clean(text: str) -> str:
    return re.sub(r" at 0x[0-9a-fA-F]+", "", text)


#: JPEG colour spaces simplejpeg decodes to RGB exactly as Pillow does
_DIRECT_COLORSPACES = ("YCbCr", "Gray")


def _strict_jpeg(data: bytes, name: str | Path | None, mode: str) -> np.ndarray | None:
    """The pixels (``mode`` "RGB" or "RGBX") when simplejpeg can decode the JPEG as Pillow
    would; None after only checking it (other colour spaces, left to Pillow). Corruption raises
    a SourceError either way."""
    import simplejpeg  # libjpeg-turbo's strict mode (Pillow does not report its warnings)

    try:
        if simplejpeg.decode_jpeg_header(data)[2] in _DIRECT_COLORSPACES:
            return simplejpeg.decode_jpeg(data, mode, strict=True)
        simplejpeg.decode_jpeg(data, strict=True, min_height=1, min_width=1)
    except ValueError as exc:
        detail = _clean(str(exc))
        raise SourceError(f"corrupt JPEG data ({detail})", path=name, fix=CORRUPT_FIX) from None
    return None


def decode_rgb(
    data: bytes, name: str | Path | None = None, *, fix: str = CORRUPT_FIX
) -> Image.Image:
    """The image fully decoded to RGB, or a :class:`SourceError` naming ``name``."""
    decoded = _decode(data, name, fix, "RGB")
    return Image.fromarray(decoded) if isinstance(decoded, np.ndarray) else decoded


def decode_rgbx(
    data: bytes, name: str | Path | None = None, *, fix: str = CORRUPT_FIX
) -> np.ndarray:
    """The RGB pixels as an (h, w, 4) uint8 array (a fourth, unused byte per pixel, as Pillow
    stores RGB), for :func:`benchsmith.builders.mmneedle.resample.resize_rgbx`; same checks and errors as
    :func:`decode_rgb`. JPEGs are decoded straight to this layout (no copy)."""
    decoded = _decode(data, name, fix, "RGBX")
    if isinstance(decoded, np.ndarray):
        return decoded
    return np.asarray(decoded.convert("RGBX"))


def _decode(data: bytes, name: str | Path | None, fix: str, mode: str) -> Image.Image | np.ndarray:
    """A JPEG simplejpeg decodes as Pillow would, as an array in ``mode``; anything else as an
    RGB Pillow image."""
    limit = max_pixels()
    pillow_limit, Image.MAX_IMAGE_PIXELS = Image.MAX_IMAGE_PIXELS, None  # checked here instead
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                width, height = image.size
                if width * height > limit:
                    raise SourceError(
                        f"image claims {width}x{height} = {width * height:,} pixels, above the "
                        f"limit of {limit:,} (images.max_pixels)",
                        path=name,
                        fix="if the image is genuine, raise images.max_pixels in params.yaml; "
                        "otherwise its header is corrupt: fetch the file again",
                    )
                if (
                    image.format == "JPEG"
                    and (pixels := _strict_jpeg(data, name, mode)) is not None
                ):
                    return pixels
                image.load()
                return image.convert("RGB") if image.mode != "RGB" else image.copy()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise SourceError(
            f"image is too large to decode ({_clean(str(exc))}; limit images.max_pixels = "
            f"{limit:,})",
            path=name,
            fix="if the image is genuine, raise images.max_pixels in params.yaml",
        ) from None
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as exc:
        raise SourceError(
            f"cannot decode image ({type(exc).__name__}: {_clean(str(exc))})", path=name, fix=fix
        ) from None
    finally:
        Image.MAX_IMAGE_PIXELS = pillow_limit
