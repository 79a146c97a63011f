"""An engine's reads kept on disk: one engine run per image and identity, the same result back,
a damaged entry read again, an error never kept, another engine never served."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from benchsmith.images.ocr import OcrBackend, OcrResult, OcrWord
from benchsmith.images.ocr_reads import RememberedReads, read_key


class CountingEngine(OcrBackend):
    """Reads the mean grey level of the image as its one word, and counts its runs."""

    name = "counting"

    def __init__(self, version: str = "1"):
        super().__init__()
        self._version, self.runs, self.fail = version, 0, False

    def version(self) -> str:
        return self._version

    def model_files(self) -> list[Path]:
        return []

    def read(self, image: Image.Image) -> OcrResult:
        self.runs += 1
        if self.fail:
            raise RuntimeError("engine crashed")
        mean = float(np.asarray(image.convert("L")).mean())
        return OcrResult(self.identity(), [OcrWord(f"{mean:.3f}", (0, 0, *image.size), 0.93, 0)])


def page(shade: int) -> Image.Image:
    image = Image.new("RGB", (40, 20), "white")
    ImageDraw.Draw(image).rectangle((5, 5, 30, 15), fill=(shade, shade, shade))
    return image


def test_an_image_is_read_once_and_the_same_result_comes_back(tmp_path):
    engine = CountingEngine()
    reads = RememberedReads(engine, tmp_path)
    first = reads.read(page(10))
    again = RememberedReads(engine, tmp_path).read(page(10))  # a new process would do this
    assert engine.runs == 1 and again == first
    assert reads.identity() == engine.identity() and reads.name == engine.name
    other = reads.read(page(200))
    assert engine.runs == 2 and other != first
    # a line crop of the same pixels is another read: the engine reads lines another way
    reads.read_line(page(10))
    assert engine.runs == 3 and (reads.reads, reads.reused) == (3, 0)


def test_another_engine_version_is_never_served_an_old_read(tmp_path):
    RememberedReads(CountingEngine("1"), tmp_path).read(page(10))
    newer = CountingEngine("2")
    result = RememberedReads(newer, tmp_path).read(page(10))
    assert newer.runs == 1 and result.backend == newer.identity()


def test_a_damaged_entry_is_read_again_and_an_error_is_not_kept(tmp_path):
    engine = CountingEngine()
    reads = RememberedReads(engine, tmp_path)
    expected = reads.read(page(10))
    key = read_key(engine.identity(), "page", page(10))
    entry = tmp_path / key[:2] / f"{key}.json"
    entry.write_text('{"backend": "counting', encoding="utf-8")
    assert reads.read(page(10)) == expected and engine.runs == 2
    assert reads.read(page(10)) == expected and engine.runs == 2  # written again, whole
    engine.fail = True
    with pytest.raises(RuntimeError, match="engine crashed"):
        reads.read(page(99))
    assert not list(tmp_path.rglob(f"{read_key(engine.identity(), 'page', page(99))}.json"))
