"""Scanned exam pages and raw HTML pages as the sample writes them."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bs4 import BeautifulSoup
from PIL import Image

from benchsmith.core.hashing import sha256_file
from benchsmith.sources.exams.fonts import cjk_font
from benchsmith.sources.exams.html_sample import write_sample_html
from benchsmith.sources.exams.pages_sample import PAGES, VARIANTS, write_sample_pages


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("pages")
    write_sample_pages(folder)
    return folder


def test_every_page_in_every_variant_with_its_ground_truth(pages):
    manifest = json.loads((pages / "pages.json").read_text())
    assert manifest["font"]["sha256"] == sha256_file(cjk_font().path)
    for name in PAGES:
        clean = np.asarray(Image.open(pages / f"{name}.clean.png"))
        for kind in VARIANTS:
            image = np.asarray(Image.open(pages / f"{name}.{kind}.png"))
            assert image.shape == clean.shape
            assert (kind == "clean") == np.array_equal(image, clean)
            gt = (pages / f"{name}.{kind}.gt.txt").read_text(encoding="utf-8")
            assert gt.startswith(f"{PAGES[name][0].number}. ")
        for box in manifest["pages"][name]["figures"]["clean"]:
            inside = clean[box[1] : box[3], box[0] : box[2]]
            assert (inside < 128).sum() > 200  # the triangle's lines are in its box
    assert "一年之计在于______" in (pages / "page_001.clean.gt.txt").read_text(encoding="utf-8")


def test_html_pages_hold_every_construct(tmp_path):
    manifest = write_sample_html(tmp_path)
    holds = {h for page in manifest["pages"].values() for h in page["holds"]}
    assert {"u", "b", "i", "table", "rowspan_table", "img", "sup", "mathml"} <= holds
    for name in manifest["pages"]:
        soup = BeautifulSoup((tmp_path / f"{name}.html").read_text(encoding="utf-8"), "html.parser")
        for image in soup.find_all("img"):
            assert (tmp_path / image["src"]).is_file()
    rowspan = BeautifulSoup((tmp_path / "q_0003.html").read_text(), "html.parser")
    assert rowspan.find("td", rowspan="2") and rowspan.find("math")
