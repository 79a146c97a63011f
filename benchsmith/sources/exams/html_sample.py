"""Raw crawled question pages (HTML) with every construct the cleaning must handle.

Each ``html/q_NNNN.html`` is one question as a question bank serves it: layout styles
(alignment, colour, fonts) that must go, ``<u>`` that must stay, ``<b>``/``<i>``/``<strong>``
to become Markdown, a simple table (Markdown) and a table with ``rowspan`` (rendered to an
image), ``<img>`` (to ``[IMAGE_n]``), ``<sup>``/``<sub>`` and MathML (to LaTeX), entities and
``<br>``, a hint and parallel blanks for the cleaning. Images live in ``html/img/``;
``html/pages.json`` lists each page with what it holds, ``html/answer_key.json`` the metadata and
answers the bank stores beside each page.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

from benchsmith.sources.exams.release_sample import shape_figure, triangle_figure


def _png(image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


PAGES = {
    "q_0001": {
        "holds": ["style", "u", "b", "i", "img", "sup", "options"],
        "html": """<!DOCTYPE html><html><head><meta charset="utf-8"><title>初中数学 第1题</title>
<style>.q{font-size:14px}</style></head><body>
<div class="q" style="text-align:center;color:#ff0000;font-family:SimSun">
<p><b>1.</b> 如图 <img src="img/triangle.png" width="120">，在三角形 ABC 中，<u>M 是 BC 的中点</u>，
且 AB&nbsp;=&nbsp;AC，<i>则</i> AM<sup>2</sup> + BM<sup>2</sup> 等于（　　）</p>
<p>A. AB<sup>2</sup><br>B. BC<sup>2</sup><br>C. 2AB<br>D. AC</p>
</div></body></html>""",
    },
    "q_0002": {
        "holds": ["table", "strong", "sub", "blank"],
        "html": """<html><body><div style="color:blue">
<p><strong>2.</strong> 下表是某地的气温记录，H<sub>2</sub>O 在 ____ ℃ 时结冰。</p>
<table border="1" style="margin:auto"><tr><th>时间</th><th>气温</th></tr>
<tr><td>早上</td><td>12℃</td></tr><tr><td>中午</td><td>25℃</td></tr></table>
</div></body></html>""",
    },
    "q_0003": {
        "holds": ["rowspan_table", "mathml", "img_in_options"],
        "html": """<html><body>
<p align="left">3. 已知 <math><mfrac><mn>1</mn><mn>2</mn></mfrac><mo>+</mo><msup><mi>x</mi><mn>2</mn></msup></math> 的值如下表，下列图形中不同的是</p>
<table border="1"><tr><td rowspan="2">x</td><td>1</td><td>2</td></tr>
<tr><td>1.5</td><td>4.5</td></tr></table>
<p>A. <img src="img/circle.png"> B. <img src="img/square.png"> C. <img src="img/star.png"></p>
</body></html>""",
    },
    "q_0004": {
        "holds": ["broken_nesting", "entities"],
        "html": """<html><body><p>4. 下列说法正确的是 &lt;多选&gt;<b>（注意：<i>多选</b></i>）
<p>A. 水的沸点是 100&deg;C<p>B. 冰的熔点是 0&deg;C<p>C. 以上都对</body>""",
    },
    "q_0005": {
        "holds": ["parallel_blanks", "hint"],
        "html": """<html><body><p>5. 写出下列物质的化学式（提示：注意下标的位置）：
①水 ______；②氧气 ______。</p></body></html>""",
    },
}  # fmt: skip
# What a crawl stores next to each page (the bank's metadata and answer), in
# ``html/answer_key.json``: the converter needs it to make a problem record of a page.
ANSWER_KEY = {
    "q_0001": {"education": "初中", "subject": ["数学"], "subject_code": "czsx",
               "knowledge": ["勾股定理"], "questions": [{"type": "单选", "answer": "A"}]},
    "q_0002": {"education": "初中", "subject": ["化学"], "subject_code": "czhx",
               "knowledge": ["物态变化"], "questions": [{"type": "填空", "answer": "0"}]},
    "q_0003": {"education": "行测", "subject": ["行测"], "subject_code": "shxc",
               "knowledge": ["图形推理"], "questions": [{"type": "单选", "answer": "C"}]},
    "q_0004": {"education": "初中", "subject": ["物理"], "subject_code": "czwl",
               "knowledge": ["物态变化"],
               "questions": [{"type": "多选", "answer": "AB", "analysis": "标准大气压下。"}]},
    "q_0005": {"education": "初中", "subject": ["化学"], "subject_code": "czhx",
               "knowledge": ["化学式"], "questions": [{"type": "填空", "answer": "H2O\nO2"}]},
}  # fmt: skip
IMAGES = {
    "triangle.png": triangle_figure,
    "circle.png": lambda: shape_figure("circle"),
    "square.png": lambda: shape_figure("square"),
    "star.png": lambda: shape_figure("star"),
}


def write_sample_html(folder: Path) -> dict:
    """The raw pages and their images into ``folder`` (which must exist); the manifest."""
    (folder / "img").mkdir()
    for name, draw in IMAGES.items():
        (folder / "img" / name).write_bytes(_png(draw()))
    for name, page in PAGES.items():
        (folder / f"{name}.html").write_text(page["html"], encoding="utf-8")
    manifest = {"pages": {name: {"holds": page["holds"]} for name, page in PAGES.items()}}
    (folder / "answer_key.json").write_text(json.dumps(ANSWER_KEY, ensure_ascii=False, indent=1),
                                            encoding="utf-8")  # fmt: skip
    (folder / "pages.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1),
                                       encoding="utf-8")  # fmt: skip
    return manifest
