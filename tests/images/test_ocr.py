"""The one OCR interface: results as plain data, lines in reading order, error rates at three
levels, engines by name, and an identity that changes when a model file does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import sha256_file
from benchsmith.images.ocr import (
    OcrBackend,
    OcrResult,
    OcrWord,
    assign_lines,
    character_error_rate,
    join_words,
    model_digest,
)
from benchsmith.images.ocr_engines import BACKENDS, DEFAULT_BACKEND, ocr_backend


def test_words_join_like_the_printed_line():
    assert join_words(["如图", "，", "在", "ABC", "中"]) == "如图，在ABC中"
    assert join_words(["Which", "of", "the"]) == "Which of the"
    # NFKC folds the full-width comma, spaces do not count: one missing character of seven
    assert character_error_rate("如图在ABC", "如图，在 ABC") == pytest.approx(1 / 7)
    assert character_error_rate("", "") == 0.0 and character_error_rate("x", "") == 1.0


def test_error_rates_raw_without_whitespace_and_without_punctuation():
    truth, said = "1. 如图，在 ABC 中。", "1.如图,在ABC中"
    # raw: the three spaces, the full-width comma and the full stop all count (5 of 14)
    assert character_error_rate(said, truth, "raw") == pytest.approx(5 / 14)
    # whitespace ignored and NFKC: "，" is ","; only the missing "。" counts (1 of 11)
    assert character_error_rate(said, truth) == pytest.approx(1 / 11)
    # punctuation ignored as well: nothing is wrong
    assert character_error_rate(said, truth, "punctuation") == 0.0
    with pytest.raises(ValueError, match="unknown CER level"):
        character_error_rate(said, truth, "loose")


def test_boxes_are_grouped_into_lines_in_reading_order():
    boxes = [
        (300, 52, 420, 80),  # the second half of line 1, cut off by a blank
        (10, 100, 200, 128),  # line 2
        (10, 50, 250, 78),  # line 1
        (10, 150, 60, 170),  # line 3
    ]
    assert assign_lines(boxes) == [0, 1, 0, 2]
    assert assign_lines([]) == []


def test_results_round_trip_and_lines_follow_the_line_index():
    words = [OcrWord("如图", (0, 0, 40, 20), 0.9, 0), OcrWord("ABC", (45, 0, 90, 20), 0.8, 0),
             OcrWord("Which", (0, 30, 50, 50), 1.0, 1), OcrWord("of", (55, 30, 70, 50), 1.0, 1)]  # fmt: skip
    result = OcrResult("engine 1", words)
    assert result.lines == ["如图ABC", "Which of"] and result.text == "如图ABC\nWhich of"
    assert OcrResult.from_dict(json.loads(json.dumps(result.as_dict()))) == result


class FileBackend(OcrBackend):
    """An engine whose 'model' is a file of the test's, to see the identity follow it."""

    name = "file"

    def __init__(self, model: Path):
        super().__init__()
        self.model = model

    def version(self) -> str:
        return "1.0"

    def model_files(self) -> list[Path]:
        return [self.model]

    def read(self, image: Image.Image) -> OcrResult:
        return OcrResult(self.identity(), [])


def test_the_identity_names_every_model_file_by_content(tmp_path):
    model = tmp_path / "weights.onnx"
    model.write_bytes(b"one model")
    before = FileBackend(model).identity()
    assert before == f"file 1.0 [chi_sim+eng] {{weights.onnx:{sha256_file(model)[:12]}}}"
    model.write_bytes(b"another model, longer")  # a changed file is never served stale
    assert FileBackend(model).identity() != before
    assert model_digest(model) == sha256_file(model)
    # reading a line is reading the image, unless an engine knows better
    assert FileBackend(model).read_line(Image.new("L", (10, 10))).words == []


def test_engines_by_name_with_the_pip_installed_one_first():
    assert BACKENDS == ("rapidocr", "tesseract", "easyocr") and DEFAULT_BACKEND == "rapidocr"
    assert [ocr_backend(name).name for name in BACKENDS] == list(BACKENDS)
    with pytest.raises(BenchsmithError, match="unknown OCR backend 'paddle'") as error:
        ocr_backend("paddle")
    assert "rapidocr" in error.value.fix
