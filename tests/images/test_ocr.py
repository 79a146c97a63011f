"""The one OCR interface: Tesseract reads the sample exam pages (Chinese and English); a
backend that cannot run says why and how to fix it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from benchsmith.images.ocr import (
    EasyOcrBackend,
    OcrResult,
    OcrUnavailable,
    TesseractBackend,
    character_error_rate,
    join_words,
    ocr_backend,
)
from benchsmith.sources.exams.pages_sample import write_sample_pages


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pages")
    write_sample_pages(folder)
    return folder


def page_without_figures(pages: Path, name: str) -> Image.Image:
    image = Image.open(pages / f"{name}.clean.png")
    draw = ImageDraw.Draw(image)
    for box in json.loads((pages / "pages.json").read_text())["pages"][name]["figures"]["clean"]:
        draw.rectangle(box, fill=255)
    return image


@pytest.mark.parametrize(
    ("name", "printed"), [("page_001", "在三角形ABC中"), ("page_002", "Which of the following")]
)
def test_tesseract_reads_a_clean_exam_page(pages, name, printed):
    result = ocr_backend("tesseract").read(page_without_figures(pages, name))
    truth = (pages / f"{name}.clean.gt.txt").read_text(encoding="utf-8").replace("______", "")
    assert character_error_rate(result.text, truth) < 0.12, result.text
    assert result.backend.startswith("tesseract 5") and "chi_sim+eng" in result.backend
    assert printed in result.text  # Chinese and English stems, read as printed
    assert all(0 <= w.confidence <= 1 for w in result.words)
    assert OcrResult.from_dict(json.loads(json.dumps(result.as_dict()))) == result


def test_words_join_like_the_printed_line():
    assert join_words(["如图", "，", "在", "ABC", "中"]) == "如图，在ABC中"
    assert join_words(["Which", "of", "the"]) == "Which of the"
    # NFKC folds the full-width comma, spaces do not count: one missing character of seven
    assert character_error_rate("如图在ABC", "如图，在 ABC") == pytest.approx(1 / 7)
    assert character_error_rate("", "") == 0.0 and character_error_rate("x", "") == 1.0


def test_unavailable_backends_say_how_to_fix_them(tmp_path, monkeypatch):
    image = Image.new("L", (40, 20), 255)
    with pytest.raises(OcrUnavailable, match="no language data for \\['deu'\\]") as error:
        TesseractBackend(languages=("deu",)).read(image)
    assert "tesseract-ocr-deu" in error.value.fix
    import pytesseract

    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", str(tmp_path / "no-tesseract"))
    with pytest.raises(OcrUnavailable, match="tesseract program is not installed"):
        TesseractBackend().read(image)
    monkeypatch.undo()
    monkeypatch.delenv("EASYOCR_MODULE_PATH", raising=False)
    with pytest.raises(OcrUnavailable) as error:
        EasyOcrBackend(model_dir=tmp_path).read(image)
    message = str(error.value)
    assert "not installed" in message or "never downloads" in message
    with pytest.raises(Exception, match="unknown OCR backend"):
        ocr_backend("paddle")
