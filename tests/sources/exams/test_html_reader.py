"""Crawled question pages to Markdown: every construct of the sample pages, exactly."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from benchsmith.core.errors import SourceError
from benchsmith.sources.exams.html_reader import convert_page
from benchsmith.sources.exams.html_sample import write_sample_html

EXPECTED = {
    "q_0001": "**1.** 如图 [IMAGE_1]，在三角形 ABC 中，<u>M 是 BC 的中点</u>，且 AB = AC，*则* "
    "AM$^{2}$ + BM$^{2}$ 等于（　　）\nA. AB$^{2}$\nB. BC$^{2}$\nC. 2AB\nD. AC",
    "q_0002": "**2.** 下表是某地的气温记录，H$_{2}$O 在 ____ ℃ 时结冰。\n| 时间 | 气温 |\n|---|---|\n"
    "| 早上 | 12℃ |\n| 中午 | 25℃ |",
    "q_0003": "3. 已知 $\\frac{1}{2}+{x}^{2}$ 的值如下表，下列图形中不同的是\n[IMAGE_1]\n"
    "A. [IMAGE_2] B. [IMAGE_3] C. [IMAGE_4]",
    "q_0004": "4. 下列说法正确的是 <多选>**（注意：*多选***）\nA. 水的沸点是 100°C\nB. 冰的熔点是 0°C\n"
    "C. 以上都对",
}


@pytest.fixture(scope="module")
def html(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("html")
    write_sample_html(folder)
    return folder


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_sample_page_converts_exactly(html, name):
    page = convert_page(html / f"{name}.html")
    assert page.markdown == EXPECTED[name]
    assert "style" not in page.markdown and "color" not in page.markdown


def test_images_in_reading_order_and_a_spanned_table_as_a_picture(html):
    page = convert_page(html / "q_0003.html")
    assert [(i.source, i.file) for i in page.images] == [
        ("table", ""), ("file", "img/circle.png"), ("file", "img/square.png"),
        ("file", "img/star.png"),
    ]  # fmt: skip
    table = np.asarray(Image.open(io.BytesIO(page.images[0].png)).convert("L"))
    assert table.shape[1] > table.shape[0]  # 3 columns, 2 rows
    again = convert_page(html / "q_0003.html")
    assert again.images[0].png == page.images[0].png  # the rendering is deterministic


def test_mathml_forms(tmp_path):
    page = tmp_path / "m.html"
    page.write_text(
        "<p>求 <math><msqrt><mn>2</mn></msqrt><mo>×</mo><msub><mi>a</mi><mn>1</mn></msub>"
        "<mo>≤</mo><mroot><mi>x</mi><mn>3</mn></mroot></math></p>", encoding="utf-8"
    )  # fmt: skip
    assert convert_page(page).markdown == "求 $\\sqrt{2}\\times {a}_{1}\\le \\sqrt[3]{x}$"


def test_bad_pages_are_named(tmp_path):
    missing = tmp_path / "a.html"
    missing.write_text('<p>见图 <img src="img/none.png"></p>', encoding="utf-8")
    with pytest.raises(SourceError, match="image 'img/none.png' of the page is missing"):
        convert_page(missing)
    empty = tmp_path / "b.html"
    empty.write_text("<html><head><style>p{}</style></head><body> </body></html>")
    with pytest.raises(SourceError, match="holds no text") as error:
        convert_page(empty)
    assert "b.html" in str(error.value)
    latin = tmp_path / "c.html"
    latin.write_bytes("<p>题</p>".encode("gbk"))
    with pytest.raises(SourceError, match="cannot be read as UTF-8"):
        convert_page(latin)


def test_hostile_spans_are_bounded_and_a_huge_table_skips_its_page(tmp_path):
    """rowspan=99999 colspan=99999 once grew `build multi ocr` to 22.9 GB: spans are read as
    browsers read them (a rowspan ends at the table's last row, a colspan at 1000, junk is 1)
    and a grid over the limit refuses the page, naming it, before any memory is spent."""
    from bs4 import BeautifulSoup

    from benchsmith.sources.exams.html_reader import layout_table, span, table_rows

    def table(html: str):
        return BeautifulSoup(html, "html.parser").table

    tall = table("<table><tr><td rowspan=99999>a</td><td>b</td></tr><tr><td>c</td></tr>"
                 "<tr><td>d</td></tr></table>")  # fmt: skip
    placed, n_rows, n_cols = layout_table(table_rows(tall))
    assert (n_rows, n_cols) == (3, 2)
    assert [(r, c, rows, cols) for r, c, rows, cols, _ in placed] == [
        (0, 0, 3, 1), (0, 1, 1, 1), (1, 1, 1, 1), (2, 1, 1, 1)]  # fmt: skip
    junk = table('<table><tr><td rowspan="x2" colspan="-3">a</td><td colspan="2x">b</td></tr>'
                 '<tr><td rowspan="0">c</td></tr></table>').find_all("td")  # fmt: skip
    assert [span(junk[0], "rowspan"), span(junk[0], "colspan"), span(junk[1], "colspan")] == [
        1, 1, 2]  # fmt: skip
    assert span(junk[2], "rowspan") == 65534  # 0: to the end (clamped by the layout)

    page = tmp_path / "bomb.html"
    page.write_text('<p>见表</p><table><tr><td rowspan=99999 colspan=99999>x</td><td>y</td>'
                    "</tr><tr><td>z</td></tr></table>", encoding="utf-8")  # fmt: skip
    with pytest.raises(SourceError, match=r"a table of 2 x 1001 cells after its spans") as error:
        convert_page(page, max_table_cells=1000)
    assert "bomb.html" in str(error.value) and "multi.ocr.max_table_cells" in str(error.value)
    converted = convert_page(page)  # under the default limit (2 x 1001 cells): drawn
    assert converted.images[0].source == "table"
