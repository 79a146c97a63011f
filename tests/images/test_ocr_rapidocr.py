"""RapidOCR, the default engine: it reads the sample exam pages with nothing but its wheel (no
system program, no download), names its model files by content, and keeps every word a line
holds."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from benchsmith.core.hashing import sha256_file
from benchsmith.images.ocr import OcrUnavailable, character_error_rate
from benchsmith.images.ocr_rapidocr import RapidOcrBackend, line_words
from benchsmith.sources.exams.pages_sample import write_sample_pages


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pages")
    write_sample_pages(folder)
    return folder


def page_without_figures(pages: Path, name: str, variant: str = "clean") -> Image.Image:
    image = Image.open(pages / f"{name}.{variant}.png")
    draw = ImageDraw.Draw(image)
    boxes = json.loads((pages / "pages.json").read_text())["pages"][name]["figures"][variant]
    for box in boxes:
        draw.rectangle(box, fill=255)
    return image


def test_reads_exam_pages_offline_with_the_models_in_its_wheel(pages, monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError("the OCR engine tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    backend = RapidOcrBackend()  # a fresh engine: its models load inside this test
    for name, printed in (("page_001", "在三角形ABC中"), ("page_002", "Which of the following")):
        result = backend.read(page_without_figures(pages, name))
        truth = (pages / f"{name}.clean.gt.txt").read_text("utf-8").replace("______", "")
        # the engine alone reads a printed blank as "__" (the page reader whitens blanks
        # first): 2 characters of 72 on page_001
        assert character_error_rate(result.text, truth) < 0.05, result.text
        assert printed in result.text
        assert all(0 <= w.confidence <= 1 for w in result.words)
        lines = [w.line for w in result.words]
        assert lines == sorted(lines)  # words in reading order


def test_the_identity_names_its_version_and_model_files_by_sha256():
    backend = RapidOcrBackend()
    files = backend.model_files()
    assert [f.name for f in files] == ["PP-OCRv6_det_small.onnx", "PP-OCRv6_rec_small.onnx"]
    identity = backend.identity()
    assert identity.startswith("rapidocr 3.10.0 (onnxruntime ") and "[chi_sim+eng]" in identity
    for file in files:
        assert f"{file.name}:{sha256_file(file)[:12]}" in identity


def test_a_line_is_words_cjk_one_by_one_and_latin_pieces_glued_back():
    box = (0, 0, 300, 30)
    corners = [[[10 * k, 0], [10 * k + 9, 0], [10 * k + 9, 30], [10 * k, 30]] for k in range(8)]
    pieces = [("4", 0.9, corners[0]), (".", 0.8, corners[1]), ("驾", 1.0, corners[2]),
              ("驶", 1.0, corners[3])]  # fmt: skip
    words = line_words("4.驾驶", box, 0.95, pieces)
    assert [w[0] for w in words] == ["4.", "驾", "驶"]
    assert words[0][1] == (0, 0, 19, 30) and words[0][2] == 0.8  # union box, weakest piece
    latin = [("Which", 1.0, corners[0]), ("of", 0.9, corners[1])]
    assert [w[0] for w in line_words("Which of", box, 1.0, latin)] == ["Which", "of"]
    # pieces that do not spell the line's text: the line is kept whole, never cut short
    assert line_words("A. 正确", box, 0.7, [("B", 1.0, corners[0])]) == [("A. 正确", box, 0.7)]
    assert line_words("A. 正确", box, 0.7, [("A.", 1.0, corners[0])]) == [("A. 正确", box, 0.7)]
    assert line_words("A. 正确", box, 0.7, None) == [("A. 正确", box, 0.7)]


def test_one_line_is_recognised_without_searching_the_crop(pages):
    page = Image.open(pages / "page_001.noisy.png")
    cell = page.crop((34, 65, 140, 100))  # "A. 垂直"
    result = RapidOcrBackend().read_line(cell)
    assert [w.text for w in result.words] == ["A.", "垂直"]
    assert result.words[0].box[0] < result.words[1].box[0]
    assert RapidOcrBackend().read(Image.new("L", (300, 100), 255)).words == []


def test_languages_its_models_do_not_read_are_refused_with_a_fix():
    with pytest.raises(OcrUnavailable, match="not \\['deu'\\]") as error:
        RapidOcrBackend(languages=("deu",)).read(Image.new("L", (40, 20), 255))
    assert "--backend tesseract" in error.value.fix
