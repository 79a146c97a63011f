"""Scanned exam pages to questions: deskew, crop the figures, find the blanks, OCR, structure.

A photocopied page goes through, in order:

1. **decode** strictly (a page that does not decode is an error naming it) and binarise
   (Otsu's threshold on the grey page, after a 3x3 median filter that removes speckles);
2. **deskew**: the angle in [-3, 3] degrees (0.1 steps) that makes the row profile of dark pixels
   sharpest (text lines are horizontal) is undone;
3. **figures**: dark pixels are grouped (dilated, connected components); a group taller than
   :data:`FIGURE_LINES` text lines is a figure: it is cropped from the deskewed page (with the
   small marks round it, such as vertex labels) as PNG, and whitened before OCR;
4. **blanks**: horizontal strokes at least :data:`BLANK_MIN_PX` long and at most
   :data:`BLANK_MAX_THICK` thick (pieces a few pixels apart joined) are the printed blanks
   (``______``), which OCR drops: each
   becomes ``[MASK]`` in its line, after the last word left of it;
5. **OCR** of what is left, through the one OCR interface (:mod:`benchsmith.images.ocr`);
6. **structure**: OCR words are regrouped into the page's text bands (row profile); a line
   starting with a number (``1.``, ``2、``) starts a question; a later line whose first cell starts
   with an option marker is re-read cell by cell (:mod:`.option_cells`) and its options lettered
   in order; figures belong to the question whose lines they follow.

The result keeps the OCR words and the figure boxes, so a caller can cache it by the page's
sha256 and the OCR engine's identity, and report what was read.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from benchsmith.core.errors import SourceError
from benchsmith.images.ocr import OcrBackend, OcrResult, OcrWord, join_words
from benchsmith.sources.exams.option_cells import band_of, read_options, regroup, text_bands

FIGURE_LINES = 2.5  # a group taller than this many text lines is a figure
LABEL_HEIGHT = 0.85  # a mark next to a figure, below this many text-line heights, is its label
BLANK_MIN_PX = 40
BLANK_MAX_THICK = 4
BLANK_GAP_PX = 3  # underscores typed in a row: a gap this small between two is one blank
SKEW_RANGE, SKEW_STEP, SKEW_TIE = 3.0, 0.1, 0.01
QUESTION_START = re.compile(r"^\s*(\d{1,3})\s*[.．、,，]?\s*")
OPTION = re.compile(r"(?<![A-Za-z])([A-H])\s*[.．、:：]\s*")


@dataclass
class PageQuestion:
    number: int
    stem: str
    options: list[str] = field(default_factory=list)
    blanks: int = 0
    figures: list[int] = field(default_factory=list)  # indexes into ReadPage.figures

    def markdown(self) -> str:
        lines = [f"{self.number}. {self.stem}"]
        lines += [f"[IMAGE_{k + 1}]" for k in range(len(self.figures))]
        lines += [f"{chr(65 + k)}. {o}" for k, o in enumerate(self.options)]
        return "\n".join(lines)


@dataclass
class ReadPage:
    skew_deg: float
    figures: list[tuple[int, int, int, int]]  # boxes on the deskewed page
    figure_png: list[bytes]
    lines: list[str]  # OCR lines with [MASK] for the blanks, in reading order
    questions: list[PageQuestion]
    ocr: OcrResult


def otsu_threshold(grey: np.ndarray) -> int:
    counts = np.bincount(grey.ravel(), minlength=256).astype(np.float64)
    share = counts / counts.sum()
    weight = np.cumsum(share)
    mean = np.cumsum(share * np.arange(256))
    between = (mean[-1] * weight - mean) ** 2 / (weight * (1 - weight) + 1e-12)
    return int(np.argmax(between))


def dark_mask(page: Image.Image) -> np.ndarray:
    grey = np.asarray(page.filter(ImageFilter.MedianFilter(3)))
    return grey < otsu_threshold(grey)


def estimate_skew(page: Image.Image) -> float:
    """The rotation (degrees, counter-clockwise) that the page's text lines show."""
    small = page.reduce(2) if min(page.size) > 600 else page
    mask = Image.fromarray((dark_mask(small) * 255).astype(np.uint8))
    scores = {}
    for k in range(int(-SKEW_RANGE / SKEW_STEP), int(SKEW_RANGE / SKEW_STEP) + 1):
        angle = round(k * SKEW_STEP, 2)
        rows = np.asarray(mask.rotate(-angle, resample=Image.Resampling.NEAREST)).sum(axis=1)
        scores[angle] = float(np.var(rows))
    best = max(scores.values())
    # the smallest rotation among the near-best: a straight page is not turned by noise
    return min((a for a, v in scores.items() if v >= best * (1 - SKEW_TIE)), key=abs)


def components(mask: np.ndarray, grow: int) -> list[tuple[int, int, int, int]]:
    from scipy import ndimage

    grown = ndimage.binary_dilation(mask, iterations=grow) if grow else mask
    labels, _ = ndimage.label(grown)
    boxes = []
    for rows, cols in ndimage.find_objects(labels):
        boxes.append((cols.start, rows.start, cols.stop, rows.stop))
    return boxes


def find_figures(mask: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Boxes of the groups taller than :data:`FIGURE_LINES` text lines, with the small marks
    next to them (labels) absorbed."""
    boxes = components(mask, 3)
    heights = sorted(b[3] - b[1] for b in boxes)
    if not heights:
        return []
    line = heights[len(heights) // 2]
    figures = [b for b in boxes if b[3] - b[1] > FIGURE_LINES * line]
    grown = []
    for x0, y0, x1, y1 in figures:
        margin = line
        for bx0, by0, bx1, by1 in boxes:
            # labels are set smaller than body text: a text line just above or below a
            # figure (its option line) must not be swallowed by it
            small = (bx1 - bx0) < 2 * line and (by1 - by0) < LABEL_HEIGHT * line
            near = (
                bx1 >= x0 - margin
                and bx0 <= x1 + margin
                and by1 >= y0 - margin
                and by0 <= y1 + margin
            )
            if small and near:
                x0, y0, x1, y1 = min(x0, bx0), min(y0, by0), max(x1, bx1), max(y1, by1)
        grown.append((x0, y0, x1, y1))
    return sorted(grown, key=lambda b: (b[1], b[0]))


def find_blanks(mask: np.ndarray) -> list[tuple[int, int, int, int]]:
    """Printed blanks: long, thin horizontal strokes. A blank typed as underscores is a row of
    glyphs whose ends need not touch (Noto's ``_`` leaves a pixel between two), so thin
    strokes on one baseline at most :data:`BLANK_GAP_PX` apart are one stroke, as long as it
    stays thin (the foot of a ``。`` next to a blank is not part of it)."""
    thin = sorted((b for b in components(mask, 0) if b[3] - b[1] <= BLANK_MAX_THICK),
                  key=lambda b: (b[0], b[1]))  # fmt: skip
    strokes: list[tuple[int, int, int, int]] = []
    for x0, y0, x1, y1 in thin:
        joined = next((k for k, s in enumerate(strokes)
                       if 0 <= x0 - s[2] <= BLANK_GAP_PX and abs(y1 - s[3]) <= 1
                       and max(y1, s[3]) - min(y0, s[1]) <= BLANK_MAX_THICK), None)  # fmt: skip
        if joined is None:
            strokes.append((x0, y0, x1, y1))
        else:
            s = strokes[joined]
            strokes[joined] = (s[0], min(s[1], y0), max(s[2], x1), max(s[3], y1))
    blanks = [s for s in strokes if s[2] - s[0] >= BLANK_MIN_PX and s[3] - s[1] <= BLANK_MAX_THICK]
    return sorted(blanks, key=lambda b: (b[1], b[0]))


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def lines_with_blanks(ocr: OcrResult, blanks: list[tuple[int, int, int, int]]) -> list[tuple]:
    """(text, top, bottom) per OCR line, ``[MASK]`` inserted where a blank sits."""
    grouped: dict[int, list[OcrWord]] = {}
    for word in ocr.words:
        grouped.setdefault(word.line, []).append(word)
    out = []
    pending = list(blanks)
    for key in sorted(grouped):
        words = sorted(grouped[key], key=lambda w: w.box[0])
        top, bottom = min(w.box[1] for w in words), max(w.box[3] for w in words)
        height = bottom - top
        mine = [b for b in pending if top - height <= b[1] <= bottom + height / 2]
        pending = [b for b in pending if b not in mine]
        pieces = [(w.box[0], w.text) for w in words] + [(b[0], "[MASK]") for b in mine]
        out.append((join_words([t for _, t in sorted(pieces)]), top, bottom, len(mine)))
    return out


def split_options(text: str) -> tuple[str, list[str]]:
    """(text before the first option, the options) of a line such as ``A. 垂直  B. 平行``."""
    marks = list(OPTION.finditer(text))
    letters = [m.group(1) for m in marks]
    if not marks or letters[0] != "A" and not (letters[0] > "A"):
        return text, []
    head = text[: marks[0].start()].strip()
    options = [text[m.end() : (marks[k + 1].start() if k + 1 < len(marks) else len(text))].strip()
               for k, m in enumerate(marks)]  # fmt: skip
    return head, options


def structure(lines: list[tuple], figures: list[tuple]) -> list[PageQuestion]:
    questions: list[PageQuestion] = []
    for text, _top, _bottom, blanks in lines:
        start = QUESTION_START.match(text)
        if start:
            questions.append(PageQuestion(int(start.group(1)), text[start.end() :].strip(),
                                          blanks=blanks))  # fmt: skip
            continue
        if not questions:
            continue
        question = questions[-1]
        head, options = split_options(text)
        if options and not head:
            question.options += options
        else:
            question.stem += text
            question.blanks += blanks
    for index, box in enumerate(figures):
        owner = None
        for text, top, _b, _n in lines:
            start = QUESTION_START.match(text)
            if start and top < box[1]:
                owner = int(start.group(1))
        for question in questions:
            if question.number == owner:
                question.figures.append(index)
    return questions


def read_option_lines(lines: list[tuple], page: Image.Image, mask: np.ndarray,
                      bands: list[tuple[int, int]], backend: OcrBackend) -> list[tuple]:  # fmt: skip
    """Lines after a question start that are option lines, re-read cell by cell
    (:mod:`.option_cells`) and rewritten as ``A. ...  B. ...``, lettered in order."""
    out, letter, seen_question = [], 0, False
    for text, top, bottom, blanks in lines:
        if QUESTION_START.match(text):
            seen_question, letter = True, 0
        elif seen_question and not blanks:
            options = read_options(page, mask, *band_of(bands, top, bottom), backend)
            if options:
                text = "  ".join(f"{chr(65 + letter + k)}. {o}" for k, o in enumerate(options))
                letter += len(options)
        out.append((text, top, bottom, blanks))
    return out


def read_page(path: str | Path, backend: OcrBackend) -> ReadPage:
    from benchsmith.images.decode import decode_rgb

    path = Path(path)
    if not path.is_file():
        raise SourceError("page image missing", path=path, fix="restore the page file")
    page = decode_rgb(path.read_bytes(), path).convert("L")
    skew = estimate_skew(page)
    if skew:
        page = page.rotate(-skew, resample=Image.Resampling.BICUBIC, fillcolor=255)
    mask = dark_mask(page)
    figures = find_figures(mask)
    pad = 4
    crops = [page.crop((max(0, x0 - pad), max(0, y0 - pad), x1 + pad, y1 + pad))
             for x0, y0, x1, y1 in figures]  # fmt: skip
    text_page = page.copy()
    draw = ImageDraw.Draw(text_page)
    for x0, y0, x1, y1 in figures:
        draw.rectangle((x0 - pad, y0 - pad, x1 + pad, y1 + pad), fill=255)
    blanks = [b for b in find_blanks(mask) if not any(
        f[0] <= b[0] and b[2] <= f[2] and f[1] <= b[1] <= f[3] for f in figures)]  # fmt: skip
    for x0, y0, x1, y1 in blanks:  # OCR would fold the stroke into a neighbouring character
        draw.rectangle((x0, y0 - 1, x1, y1 + 1), fill=255)
    text_mask = dark_mask(text_page)
    bands = text_bands(text_mask)
    ocr = regroup(backend.read(text_page), bands)
    lines = read_option_lines(lines_with_blanks(ocr, blanks), text_page, text_mask, bands, backend)
    if not lines:
        raise SourceError("OCR found no text on the page", path=path,
                          fix="check the scan (resolution, contrast) or the OCR backend")  # fmt: skip
    return ReadPage(
        skew_deg=skew,
        figures=figures,
        figure_png=[_png(c) for c in crops],
        lines=[line[0] for line in lines],
        questions=structure(lines, figures),
        ocr=ocr,
    )


def box_iou(a, b) -> float:
    inter_w = max(0, min(a[2], b[2]) - max(a[0], b[0]))
    inter_h = max(0, min(a[3], b[3]) - max(a[1], b[1]))
    inter = inter_w * inter_h
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union else 0.0
