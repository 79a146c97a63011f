"""Render VL-ICL's operator-induction images ("A ? B", and single digits for the interleaved task).

VL-ICL drew them with PIL, Arial size 100, on 256x256 canvases. Arial is usually absent on
Linux, so the font is pinned instead: by default Pillow's embedded FreeType font
(``ImageFont.load_default(size)``, shipped inside Pillow itself, so every install has it), or a
TTF path given explicitly (e.g. DejaVuSans from the ``fonts-dejavu-core`` OS package). Either
way the sha256 of the exact font bytes is recorded (:class:`OperatorFont`), because a different
font draws different pixels and the provenance must say which one was used.

PNG bytes are deterministic: no metadata chunks are written, text is placed with integer
coordinates, and the layout engine is pinned to Pillow's BASIC one (``load_default`` uses it;
``truetype`` would otherwise pick libraqm where installed, which shapes text differently), so
the same font and inputs give the same bytes on every run. The FreeType version that rasterised
the glyphs is recorded too, since another FreeType may anti-alias differently.
"""

from __future__ import annotations

import io
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import PIL
from PIL import Image, ImageDraw, ImageFont, features

from benchsmith.core.errors import BenchsmithError, SourceError
from benchsmith.core.hashing import sha256_bytes, sha256_file

CANVAS = 256
FONT_SIZE = 100
BACKGROUND = (255, 255, 255)
INK = (0, 0, 0)


@dataclass(frozen=True)
class OperatorFont:
    name: str  # family and style as the font names itself, e.g. "Aileron Regular"
    sha256: str  # of the font file's bytes
    source: str  # "pillow-embedded (Pillow X.Y)" or the TTF path
    layout_engine: str = "basic"  # Pillow's BASIC layout, pinned for both sources
    freetype_version: str | None = None  # FreeType that rasterises the glyphs


def load_operator_font(
    path: str | Path | None = None, size: int = FONT_SIZE
) -> tuple[ImageFont.FreeTypeFont, OperatorFont]:
    """The font to render with and its identity (name, sha256, where it came from)."""
    if path is None:
        return _embedded_font(size)
    path = Path(path)
    if not path.is_file():
        raise SourceError(
            "operator font file not found",
            path=path,
            fix="install the font (e.g. apt-get install fonts-dejavu-core) or leave the font "
            "path unset to use Pillow's embedded font",
        )
    try:
        font = ImageFont.truetype(str(path), size, layout_engine=ImageFont.Layout.BASIC)
    except OSError as exc:
        raise SourceError(
            f"cannot load the operator font ({exc})",
            path=path,
            fix="point at a TrueType/OpenType font file",
        ) from exc
    return font, OperatorFont(
        _font_name(font), sha256_file(path), str(path), freetype_version=_freetype_version()
    )


def _embedded_font(size: int) -> tuple[ImageFont.FreeTypeFont, OperatorFont]:
    font = ImageFont.load_default(size)
    font_bytes = getattr(font, "font_bytes", None)
    if not isinstance(font, ImageFont.FreeTypeFont) or not font_bytes:
        raise BenchsmithError(
            f"Pillow {PIL.__version__} was built without FreeType, so its embedded scalable font "
            "is unavailable",
            fix="install a Pillow wheel with FreeType (pip install --force-reinstall pillow) or "
            "pass an explicit TTF font path",
        )
    source = f"pillow-embedded (Pillow {PIL.__version__})"
    identity = OperatorFont(
        _font_name(font), sha256_bytes(font_bytes), source, freetype_version=_freetype_version()
    )
    return font, identity


def _freetype_version() -> str | None:
    return features.version("freetype2")


def _font_name(font: ImageFont.FreeTypeFont) -> str:
    family, style = font.getname()
    return " ".join(part for part in (family, style) if part)


# The PNGs this process drew, by (font key, text): a VL-ICL build draws each expression once,
# but its audit draws them all again, and a process that builds or audits twice would draw them
# each time. The key names the font by its bytes' sha256, size, face and layout engine: the same
# key draws the same bytes (module docstring), a font object loaded again finds them.
_DRAWN: OrderedDict[tuple[tuple, str], bytes] = OrderedDict()
_DRAWN_MAX = 4096  # about 10 MB of small PNGs; the oldest are forgotten first
_FONT_KEYS: weakref.WeakKeyDictionary[ImageFont.FreeTypeFont, tuple] = weakref.WeakKeyDictionary()
_DRAWN_LOCK = threading.Lock()


def _font_key(font: ImageFont.FreeTypeFont) -> tuple:
    with _DRAWN_LOCK:
        key = _FONT_KEYS.get(font)
    if key is None:
        data = getattr(font, "font_bytes", None) or Path(font.path).read_bytes()
        key = (sha256_bytes(data), font.size, font.index, font.encoding, font.layout_engine)
        with _DRAWN_LOCK:
            _FONT_KEYS[font] = key
    return key


def render_text(text: str, font: ImageFont.FreeTypeFont) -> bytes:
    """``text`` in black, centred (by its ink box) on a 256x256 white canvas, as PNG bytes
    (drawn once per font and text in a process)."""
    key = (_font_key(font), text)
    with _DRAWN_LOCK:
        if (drawn := _DRAWN.get(key)) is not None:
            _DRAWN.move_to_end(key)
            return drawn
    drawn = _draw_text(text, font)
    with _DRAWN_LOCK:
        _DRAWN[key] = drawn
        if len(_DRAWN) > _DRAWN_MAX:
            _DRAWN.popitem(last=False)
    return drawn


def _draw_text(text: str, font: ImageFont.FreeTypeFont) -> bytes:
    image = Image.new("RGB", (CANVAS, CANVAS), BACKGROUND)
    draw = ImageDraw.Draw(image)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    width, height = right - left, bottom - top
    if width > CANVAS or height > CANVAS:
        raise BenchsmithError(
            f"{text!r} is {width}x{height} px in this font, larger than the {CANVAS}px canvas",
            fix="use a smaller font size or a narrower font",
        )
    x = (CANVAS - width) // 2 - left
    y = (CANVAS - height) // 2 - top
    draw.text((x, y), text, font=font, fill=INK)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")  # no pnginfo, no dpi: nothing but the pixels
    return buffer.getvalue()


def expression_text(a: int, b: int) -> str:
    return f"{_integer(a)} ? {_integer(b)}"


def render_expression(a: int, b: int, font: ImageFont.FreeTypeFont) -> bytes:
    """The operator-induction image: "A ? B" centred on 256x256 white."""
    return render_text(expression_text(a, b), font)


def render_operand(value: int, font: ImageFont.FreeTypeFont) -> bytes:
    """One digit (0-9) centred on 256x256 white: an operand image of the interleaved task."""
    value = _integer(value)
    if not 0 <= value <= 9:
        raise ValueError(f"an operand image shows one digit 0-9, got {value}")
    return render_text(str(value), font)


def _integer(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"operands must be integers, got {value!r}")
    return value
