"""EasyOCR, the optional engine: it runs with the extra and the user's weights, never
downloads them, and says what is missing when it cannot run."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from PIL import Image

from benchsmith.images.ocr import OcrUnavailable
from benchsmith.images.ocr_easyocr import EasyOcrBackend

WEIGHTS = os.environ.get("EASYOCR_MODULE_PATH")


def test_without_the_package_or_the_weights_it_says_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.delenv("EASYOCR_MODULE_PATH", raising=False)
    with pytest.raises(OcrUnavailable) as error:
        EasyOcrBackend(model_dir=tmp_path).read(Image.new("L", (40, 20), 255))
    message = str(error.value)
    if importlib.util.find_spec("easyocr") is None:
        assert "easyocr package is not installed" in message
        assert "benchsmith[ocr-easyocr]" in error.value.fix
    else:
        assert "never downloads" in message and str(tmp_path) in message
        assert "EASYOCR_MODULE_PATH" in error.value.fix


@pytest.mark.skipif(
    importlib.util.find_spec("easyocr") is None or not WEIGHTS,
    reason="EasyOCR needs the [ocr-easyocr] extra and weights in $EASYOCR_MODULE_PATH",
)
def test_easyocr_reads_a_clean_exam_page_with_the_users_weights(tmp_path):
    from benchsmith.images.ocr import character_error_rate
    from benchsmith.sources.exams.pages_sample import write_sample_pages

    write_sample_pages(tmp_path)
    backend = EasyOcrBackend(model_dir=Path(WEIGHTS))
    result = backend.read(Image.open(tmp_path / "page_002.clean.png"))
    truth = (tmp_path / "page_002.clean.gt.txt").read_text(encoding="utf-8")
    assert character_error_rate(result.text, truth) < 0.12, result.text
    assert all(f"{f.name}:" in result.backend for f in backend.model_files())
