"""Scanned pages to questions: the sample pages in every variant, against what was drawn, read
by the default OCR engine (the one a bare machine has).

The engine's reads of these pages were made by this session's sample build (its ``multi_ocr``
stage read the same page files with the same engine); the reader reuses them through
:class:`RememberedReads`, so what is tested here, the reader's work on the engine's output, runs
in full without a second second-per-page OCR of every page. An image the build did not read
(another crop after a reader change) is read by the engine here."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from benchsmith.core.errors import SourceError
from benchsmith.images.ocr_engines import DEFAULT_BACKEND, ocr_backend
from benchsmith.images.ocr_reads import RememberedReads
from benchsmith.sources.exams.page_reader import box_iou, find_blanks, read_page
from benchsmith.sources.exams.pages_sample import PAGES, ROTATION_DEG, VARIANTS, write_sample_pages


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pages")
    write_sample_pages(folder)
    return folder


@pytest.fixture(scope="module")
def read(pages, multi_build, tmp_path_factory) -> dict:
    reads = tmp_path_factory.mktemp("ocr") / "reads"
    shutil.copytree(multi_build["cache"] / "reads", reads)  # a copy: other tests keep theirs
    backend = RememberedReads(ocr_backend(DEFAULT_BACKEND), reads)
    return {(p, v): read_page(pages / f"{p}.{v}.png", backend) for p in PAGES for v in VARIANTS}


@pytest.mark.parametrize("variant", VARIANTS)
def test_questions_blanks_and_figures_are_found_in_every_variant(pages, read, variant):
    manifest = json.loads((pages / "pages.json").read_text())
    for name, drawn in PAGES.items():
        page = read[(name, variant)]
        assert [q.number for q in page.questions] == [q.number for q in drawn]
        assert [q.blanks for q in page.questions] == [q.blanks for q in drawn]
        figures = manifest["pages"][name]["figures"]["clean"]  # the page is deskewed first
        assert len(page.figures) == len(figures)
        for found, truth in zip(page.figures, figures, strict=True):
            assert box_iou(found, truth) > 0.6
        owners = [q.number for q in page.questions if q.figures]
        assert owners == [q.number for q in drawn if q.figure]
        expected = ROTATION_DEG if variant == "rotated" else 0.0
        assert abs(page.skew_deg - expected) <= 0.35


@pytest.mark.parametrize("variant", VARIANTS)
def test_options_are_read_cell_by_cell_in_every_variant(read, variant):
    """Every option of every question, in order, markers dropped: the option lines are re-read
    one cell at a time (read as whole lines, "B. 平行" came out as "BRT"), and the second option
    line above a figure is not swallowed by the figure."""
    for name, drawn in PAGES.items():
        page = read[(name, variant)]
        for found, truth in zip(page.questions, drawn, strict=True):
            said = [o.strip("“”\"'") for o in found.options]
            assert said == list(truth.options), (name, variant, found.number)


def test_blanks_sit_where_they_were_printed_and_figures_are_cropped(read):
    page = read[("page_001", "clean")]
    second = page.questions[1].markdown()
    assert second.startswith("2. ") and second.count("[MASK]") == 2
    assert second.index("在于[MASK]") < second.index("一日")
    first = page.questions[0].markdown()
    assert "[IMAGE_1]" in first and "三角形ABC" in first
    import io

    crop = Image.open(io.BytesIO(page.figure_png[0]))
    assert crop.width > 150 and crop.height > 120


def test_bad_pages_are_named(tmp_path):
    backend = ocr_backend(DEFAULT_BACKEND)
    broken = tmp_path / "page.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 40)
    with pytest.raises(SourceError) as error:
        read_page(broken, backend)
    assert "page.png" in str(error.value)
    blank = tmp_path / "blank.png"
    Image.new("L", (400, 300), 255).save(blank)
    with pytest.raises(SourceError, match="OCR found no text"):
        read_page(blank, backend)
    with pytest.raises(SourceError, match="page image missing"):
        read_page(tmp_path / "absent.png", backend)


def _mask_with(strokes: list[tuple[int, int, int, int]]) -> np.ndarray:
    mask = np.zeros((60, 400), dtype=bool)
    for x0, y0, x1, y1 in strokes:
        mask[y0:y1, x0:x1] = True
    return mask


def test_underscores_typed_in_a_row_are_one_blank_and_a_full_stop_is_not_part_of_it():
    # three underscores, 1-3 px apart on one baseline (as Noto draws "______"), then a full
    # stop whose foot touches the baseline two pixels further on
    typed = [(10, 40, 35, 42), (36, 40, 61, 42), (64, 40, 89, 42), (91, 36, 97, 40)]
    assert find_blanks(_mask_with(typed)) == [(10, 40, 89, 42)]
    # four pixels apart is two strokes, each too short to be a blank
    assert find_blanks(_mask_with([(10, 40, 35, 42), (39, 40, 64, 42)])) == []
    # a stroke one row lower is another baseline: not joined
    assert find_blanks(_mask_with([(10, 40, 35, 42), (36, 43, 61, 45)])) == []
    # a long thick bar (a figure's edge) is no blank
    assert find_blanks(_mask_with([(10, 30, 200, 36)])) == []
