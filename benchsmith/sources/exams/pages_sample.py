"""Scanned exam pages for the OCR path: PNG pages in four variants, with their ground truth.

Each page is drawn with the CJK font (:mod:`.fonts`): question numbers, Chinese stems, an English
line, options, blanks drawn as underscores, and a figure (a triangle ABC with midpoint M) whose
box is known. Every page is written as a photocopy would come: ``clean``, ``rotated`` (1.2
degrees), ``blurred`` (Gaussian, radius 1) and ``noisy`` (seeded grain and speckles), each as
``pages/<page>.<variant>.png`` with ``<page>.<variant>.gt.txt`` next to it (the text lines, in
reading order, exactly as drawn). ``pages/pages.json`` lists every page with its questions
(number, stem, options, blank count), its figure boxes per variant and the font's name,
sha256 and face.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from benchsmith.sources.exams.fonts import cjk_font
from benchsmith.sources.exams.release_sample import triangle_figure

VARIANTS = ("clean", "rotated", "blurred", "noisy")
PAGE_SIZE = (900, 620)
LINE_HEIGHT = 38
FONT_SIZE = 24
ROTATION_DEG = 1.2
BLANK = "______"


@dataclass(frozen=True)
class SampleQuestion:
    number: int
    stem: str
    options: tuple[str, ...] = ()
    blanks: int = 0
    figure: bool = False


PAGES: dict[str, list[SampleQuestion]] = {
    "page_001": [
        SampleQuestion(1, "如图，在三角形ABC中，M是BC的中点，AB=AC，则AM与BC的关系是", (
            "垂直", "平行", "相等", "无法确定"), figure=True),
        SampleQuestion(2, f"一年之计在于{BLANK}，一日之计在于{BLANK}。", blanks=2),
    ],
    "page_002": [
        SampleQuestion(3, "Which of the following are prime numbers?", ("2", "4", "7", "9")),
        SampleQuestion(4, "驾驶机动车在高速公路上可以随意变更车道。", ("正确", "错误")),
    ],
}  # fmt: skip


# The answer sheet that comes with the scanned exams (``pages/answer_key.json``): per page and
# question number, its metadata, type and answer.
ANSWER_KEY = {
    "page_001": {
        "1": {"education": "初中", "subject": ["数学"], "subject_code": "czsx",
              "knowledge": ["等腰三角形"], "type": "单选", "answer": "A"},
        "2": {"education": "初中", "subject": ["语文"], "subject_code": "czyw",
              "knowledge": ["名句默写"], "type": "填空", "answer": "春\n晨"},
    },
    "page_002": {
        "3": {"education": "高中", "subject": ["数学"], "subject_code": "gzsx",
              "knowledge": ["质数"], "type": "多选", "answer": "AC"},
        "4": {"education": "驾考", "subject": ["驾考"], "subject_code": "shjk",
              "knowledge": ["安全驾驶"], "type": "单选", "answer": "B"},
    },
}  # fmt: skip


def question_lines(question: SampleQuestion) -> list[str]:
    lines = [f"{question.number}. {question.stem}"]
    if question.options:
        letters = [f"{chr(65 + k)}. {o}" for k, o in enumerate(question.options)]
        lines += ["    ".join(letters[:2]), "    ".join(letters[2:])] if len(letters) > 2 else [
            "    ".join(letters)]  # fmt: skip
    return lines


def render_page(questions: list[SampleQuestion]) -> tuple[Image.Image, list[str], list]:
    """(page, text lines in reading order, figure boxes) of a clean page."""
    page = Image.new("L", PAGE_SIZE, 255)
    draw = ImageDraw.Draw(page)
    font = cjk_font().load(FONT_SIZE)
    y, lines, figures = 30, [], []
    for question in questions:
        for line in question_lines(question):
            draw.text((40, y), line, font=font, fill=0)
            lines.append(line)
            y += LINE_HEIGHT
        if question.figure:
            figure = triangle_figure().convert("L")
            box = (60, y + 6, 60 + figure.width, y + 6 + figure.height)
            page.paste(figure, box[:2])
            figures.append(list(box))
            y += figure.height + 16
        y += 14
    return page, lines, figures


def variant(page: Image.Image, name: str, rng: np.random.Generator) -> Image.Image:
    if name == "rotated":
        return page.rotate(ROTATION_DEG, resample=Image.Resampling.BICUBIC, expand=False,
                           fillcolor=255)  # fmt: skip
    if name == "blurred":
        return page.filter(ImageFilter.GaussianBlur(1.0))
    if name == "noisy":
        pixels = np.asarray(page, dtype=np.float64) + rng.normal(0, 18, page.size[::-1])
        speckles = rng.random(page.size[::-1])
        pixels[speckles < 0.002] = 0
        pixels[speckles > 0.998] = 255
        return Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8), mode="L")
    return page


def rotated_box(box: list[int], size: tuple[int, int]) -> list[int]:
    """A box's bounds after :data:`ROTATION_DEG` about the page centre (counter-clockwise)."""
    theta = np.radians(ROTATION_DEG)
    cx, cy = size[0] / 2, size[1] / 2
    corners = [(box[0], box[1]), (box[2], box[1]), (box[0], box[3]), (box[2], box[3])]
    moved = [(cx + (x - cx) * np.cos(theta) + (y - cy) * np.sin(theta),
              cy - (x - cx) * np.sin(theta) + (y - cy) * np.cos(theta)) for x, y in corners]  # fmt: skip
    xs, ys = [p[0] for p in moved], [p[1] for p in moved]
    return [int(np.floor(min(xs))), int(np.floor(min(ys))), int(np.ceil(max(xs))),
            int(np.ceil(max(ys)))]  # fmt: skip


def write_sample_pages(folder: Path, seed: int = 0) -> dict[str, Any]:
    """Write every page in every variant into ``folder`` (which must exist); returns the
    manifest also written to ``pages.json``."""
    font = cjk_font()
    manifest: dict[str, Any] = {
        "font": {"name": font.name, "sha256": font.sha256, "face": font.face_name},
        "variants": list(VARIANTS),
        "pages": {},
    }
    for name, questions in PAGES.items():
        page, lines, figures = render_page(questions)
        rng = np.random.default_rng([seed, int(name.split("_")[1])])
        boxes = {}
        for kind in VARIANTS:
            variant(page, kind, rng).save(folder / f"{name}.{kind}.png", format="PNG")
            (folder / f"{name}.{kind}.gt.txt").write_text("\n".join(lines) + "\n",
                                                          encoding="utf-8")  # fmt: skip
            boxes[kind] = [rotated_box(b, page.size) if kind == "rotated" else b for b in figures]
        manifest["pages"][name] = {
            "questions": [{"number": q.number, "stem": q.stem, "options": list(q.options),
                           "blanks": q.blanks, "figure": q.figure} for q in questions],
            "figures": boxes,
        }  # fmt: skip
    (folder / "pages.json").write_text(json.dumps(manifest, ensure_ascii=False, indent=1),
                                       encoding="utf-8")  # fmt: skip
    (folder / "answer_key.json").write_text(json.dumps(ANSWER_KEY, ensure_ascii=False, indent=1),
                                            encoding="utf-8")  # fmt: skip
    return manifest
