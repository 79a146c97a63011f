"""The CJK font comes with the install: Noto Sans CJK SC from the pinned wheel, a glyph for every
character the sample exams draw, ``BENCHSMITH_CJK_FONT`` to draw with another, and a clear error
when there is none."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from PIL import Image, ImageDraw

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import sha256_file
from benchsmith.sources.exams import fonts
from benchsmith.sources.exams.fonts import cjk_font, packaged_font_path, simplified_chinese_face
from benchsmith.sources.exams.pages_sample import ANSWER_KEY, PAGES, question_lines


@pytest.fixture
def fresh_lookup(monkeypatch):
    """cjk_font() looked up again in this test, and again after it."""
    monkeypatch.delenv("BENCHSMITH_CJK_FONT", raising=False)
    cjk_font.cache_clear()
    yield monkeypatch
    cjk_font.cache_clear()


def test_the_packaged_noto_font_and_its_simplified_chinese_face(fresh_lookup):
    font = cjk_font()
    assert font.path == packaged_font_path() and font.name == "NotoSansCJK-Regular.ttc"
    assert font.sha256 == sha256_file(font.path)
    assert (font.face, font.face_name) == (2, "Noto Sans CJK SC Regular")
    assert font.load(24).getname() == ("Noto Sans CJK SC", "Regular")


def _drawn(font, text: str) -> np.ndarray:
    image = Image.new("L", (64, 64), 0)
    ImageDraw.Draw(image).text((8, 8), text, font=font, fill=255)
    return np.asarray(image)


def test_every_character_the_sample_exams_draw_has_a_glyph(fresh_lookup):
    """No character comes out as the font's "missing glyph" box (what a font without Chinese
    draws for 三): every one of the pages, the answer key and the figures' labels."""
    font = cjk_font().load(24)
    missing = _drawn(font, "\ue000")  # a private-use code point: the .notdef box
    text = "".join(line for questions in PAGES.values() for q in questions
                   for line in question_lines(q))  # fmt: skip
    text += "".join(str(v) for page in ANSWER_KEY.values() for q in page.values()
                    for v in q.values()) + "ABCM时间温度湿度早上中午°C%"  # fmt: skip
    for character in sorted(set(text) - set(" \n")):
        drawn = _drawn(font, character)
        assert drawn.any() or character in "_", character
        assert not np.array_equal(drawn, missing), f"no glyph for {character!r}"


def test_benchsmith_cjk_font_draws_with_another_file(fresh_lookup, tmp_path):
    other = tmp_path / "MyFont.ttc"
    shutil.copy(packaged_font_path(), other)
    fresh_lookup.setenv("BENCHSMITH_CJK_FONT", str(other))
    font = cjk_font()
    assert font.path == other and font.face_name == "Noto Sans CJK SC Regular"


def test_no_font_is_a_clear_error(fresh_lookup, tmp_path):
    fresh_lookup.setenv("BENCHSMITH_CJK_FONT", str(tmp_path / "absent.ttf"))
    with pytest.raises(BenchsmithError, match="BENCHSMITH_CJK_FONT names no file") as error:
        cjk_font()
    assert "noto-cjk-sans-otc" in error.value.fix
    broken = tmp_path / "broken.ttf"
    broken.write_bytes(b"not a font")
    with pytest.raises(BenchsmithError, match="cannot load the CJK font"):
        simplified_chinese_face(broken)
    fresh_lookup.delenv("BENCHSMITH_CJK_FONT")
    cjk_font.cache_clear()
    fresh_lookup.setattr(fonts, "packaged_font_path", lambda: None)
    with pytest.raises(BenchsmithError, match="noto_cjk_sans_otc is not installed") as error:
        cjk_font()
    assert "pip install noto-cjk-sans-otc==0.0.1" in error.value.fix
