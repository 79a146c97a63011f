"""Operator-induction images: pinned font identity, deterministic bytes, centred text."""

from __future__ import annotations

import hashlib
import io
from pathlib import Path

import numpy as np
import PIL
import pytest
from PIL import Image, ImageFont, features
from png_inspect import png_chunk_types

from benchsmith.builders.vlicl import operator_images
from benchsmith.builders.vlicl.operator_images import (
    OperatorFont,
    load_operator_font,
    render_expression,
    render_operand,
)
from benchsmith.core.errors import BenchsmithError, SourceError


@pytest.fixture(scope="module")
def embedded() -> tuple[ImageFont.FreeTypeFont, OperatorFont]:
    return load_operator_font()


def decode(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as image:
        assert image.format == "PNG" and image.size == (256, 256)
        return np.asarray(image.convert("L"))


def ink_box(pixels: np.ndarray) -> tuple[int, int, int, int]:
    ys, xs = np.nonzero(pixels < 128)
    return int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())


def test_embedded_font_identity(embedded: tuple[ImageFont.FreeTypeFont, OperatorFont]) -> None:
    font, identity = embedded
    assert isinstance(font, ImageFont.FreeTypeFont)
    assert identity.sha256 == hashlib.sha256(font.font_bytes).hexdigest()
    assert identity.source == f"pillow-embedded (Pillow {PIL.__version__})"
    assert identity.name == " ".join(part for part in font.getname() if part)
    assert font.size == 100
    assert identity.layout_engine == "basic" and font.layout_engine == ImageFont.Layout.BASIC
    assert identity.freetype_version == features.version("freetype2")


def test_font_path_records_the_file_hash(
    embedded: tuple[ImageFont.FreeTypeFont, OperatorFont], tmp_path: Path
) -> None:
    font, identity = embedded
    same = tmp_path / "embedded.ttf"
    same.write_bytes(font.font_bytes)
    from_file, file_identity = load_operator_font(same)
    assert file_identity.sha256 == identity.sha256 and file_identity.source == str(same)
    # The same font bytes render the same pixels, whether embedded or loaded from a file.
    assert render_expression(3, 4, from_file) == render_expression(3, 4, font)
    # Another file (here: the same font with trailing bytes) is recorded with its own hash.
    other = tmp_path / "other.ttf"
    other.write_bytes(font.font_bytes + b"\x00" * 16)
    _, other_identity = load_operator_font(other, size=100)
    assert other_identity.sha256 == hashlib.sha256(other.read_bytes()).hexdigest()
    assert other_identity.sha256 != identity.sha256


def test_font_errors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SourceError, match="font file not found") as info:
        load_operator_font(tmp_path / "Arial.ttf")
    assert str(tmp_path / "Arial.ttf") in str(info.value)
    (tmp_path / "broken.ttf").write_bytes(b"not a font")
    with pytest.raises(SourceError, match="cannot load the operator font"):
        load_operator_font(tmp_path / "broken.ttf")
    monkeypatch.setattr(
        operator_images.ImageFont,
        "load_default",
        lambda size=None: ImageFont.load_default_imagefont(),
    )
    with pytest.raises(BenchsmithError, match="without FreeType"):
        load_operator_font()


def test_expression_bytes_are_deterministic(
    embedded: tuple[ImageFont.FreeTypeFont, OperatorFont],
) -> None:
    font, _ = embedded
    first = render_expression(7, 2, font)
    assert render_expression(7, 2, font) == first
    assert render_expression(7, 2, load_operator_font()[0]) == first  # fresh font object
    assert set(png_chunk_types(first)) == {b"IHDR", b"IDAT", b"IEND"}  # no metadata


def test_all_expressions_fit_differ_and_are_centred(
    embedded: tuple[ImageFont.FreeTypeFont, OperatorFont],
) -> None:
    font, _ = embedded
    digests = set()
    for a in range(10):
        for b in range(10):
            data = render_expression(a, b, font)
            digests.add(hashlib.sha256(data).hexdigest())
            pixels = decode(data)
            left, top, right, bottom = ink_box(pixels)
            assert left > 0 and top > 0 and right < 255 and bottom < 255  # nothing clipped
            # centred by the text box (advance widths), so the ink may sit a few pixels off
            assert abs((left + right) / 2 - 127.5) <= 10 and abs((top + bottom) / 2 - 127.5) <= 2
            assert pixels[0, 0] == 255  # white background
    assert len(digests) == 100  # different a/b always give different images


def test_question_mark_is_drawn(embedded: tuple[ImageFont.FreeTypeFont, OperatorFont]) -> None:
    font, _ = embedded
    pixels = decode(render_expression(1, 1, font))
    columns = np.nonzero((pixels < 128).any(axis=0))[0]
    runs = np.split(columns, np.nonzero(np.diff(columns) > 1)[0] + 1)
    assert len(runs) == 3  # "1", "?", "1": three separate glyphs


def test_operands(embedded: tuple[ImageFont.FreeTypeFont, OperatorFont]) -> None:
    font, _ = embedded
    images = [render_operand(v, font) for v in range(10)]
    assert len(set(images)) == 10
    assert render_operand(5, font) == images[5]
    for data in images:
        left, top, right, bottom = ink_box(decode(data))
        assert abs((left + right) / 2 - 127.5) <= 10 and abs((top + bottom) / 2 - 127.5) <= 2
    with pytest.raises(ValueError, match="one digit"):
        render_operand(10, font)
    with pytest.raises(TypeError):
        render_expression(1.5, 2, font)  # type: ignore[arg-type]


def test_text_too_wide_is_a_clear_error() -> None:
    big, _ = load_operator_font(size=300)
    with pytest.raises(BenchsmithError, match="larger than the 256px canvas"):
        render_expression(8, 8, big)


def test_a_process_draws_each_text_once_per_font(tmp_path: Path, monkeypatch) -> None:
    """An audit that re-renders a build's expressions in the same process draws nothing again
    (a font object loaded afresh included), and the bytes are the drawn ones; another font's
    bytes, even at the same path, draw again."""
    from collections import OrderedDict

    monkeypatch.setattr(operator_images, "_DRAWN", OrderedDict())  # what other tests drew
    drawn: list[str] = []
    real = operator_images._draw_text
    monkeypatch.setattr(operator_images, "_draw_text",
                        lambda text, font: drawn.append(text) or real(text, font))  # fmt: skip
    font, _ = load_operator_font()
    first = render_expression(8, 1, font)
    assert render_expression(8, 1, load_operator_font()[0]) == first
    assert first == real("8 ? 1", font) and drawn == ["8 ? 1"]
    path = tmp_path / "face.ttf"
    path.write_bytes(font.font_bytes)
    assert render_expression(8, 1, load_operator_font(path)[0]) == first  # same bytes: no draw
    assert drawn == ["8 ? 1"]
    path.write_bytes(font.font_bytes + b"\x00" * 16)  # another file at the same path
    render_expression(8, 1, load_operator_font(path)[0])
    assert drawn == ["8 ? 1", "8 ? 1"]
