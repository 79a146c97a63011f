"""Tesseract, the engine for machines that have the program: it reads the sample exam pages
where it is installed, and names its language data by content; where it is not installed, it
says so and how to fix it."""

from __future__ import annotations

import shutil

import pytest
from PIL import Image

from benchsmith.core.hashing import sha256_file
from benchsmith.images.ocr import OcrUnavailable, character_error_rate
from benchsmith.images.ocr_tesseract import TesseractBackend
from benchsmith.sources.exams.pages_sample import write_sample_pages

INSTALLED = shutil.which("tesseract") is not None
needs_tesseract = pytest.mark.skipif(
    not INSTALLED, reason="the tesseract program is not installed here (an optional engine)"
)


@needs_tesseract
def test_tesseract_reads_a_clean_exam_page_and_names_its_language_data(tmp_path):
    write_sample_pages(tmp_path)
    backend = TesseractBackend()
    if not {"chi_sim", "eng"} <= set(backend_languages()):
        pytest.skip("tesseract has no chi_sim language data here")
    result = backend.read(Image.open(tmp_path / "page_002.clean.png"))
    truth = (tmp_path / "page_002.clean.gt.txt").read_text(encoding="utf-8")
    assert character_error_rate(result.text, truth) < 0.12, result.text
    assert "Which of the following" in result.text or "Which ofthe following" in result.text
    assert result.backend.startswith("tesseract 5") and "[chi_sim+eng]" in result.backend
    for file in backend.model_files():
        assert file.name.endswith(".traineddata")
        assert f"{file.name}:{sha256_file(file)[:12]}" in result.backend


def backend_languages() -> list[str]:
    import pytesseract

    return pytesseract.get_languages(config="")


@needs_tesseract
def test_missing_language_data_says_which_package_to_install():
    with pytest.raises(OcrUnavailable, match="no language data for \\['deu'\\]") as error:
        TesseractBackend(languages=("deu",)).read(Image.new("L", (40, 20), 255))
    assert "tesseract-ocr-deu" in error.value.fix


def test_a_missing_program_says_how_to_fix_it(tmp_path, monkeypatch):
    import pytesseract

    monkeypatch.setattr(pytesseract.pytesseract, "tesseract_cmd", str(tmp_path / "no-tesseract"))
    with pytest.raises(OcrUnavailable, match="tesseract program is not installed") as error:
        TesseractBackend().read(Image.new("L", (40, 20), 255))
    assert "--backend rapidocr" in error.value.fix
