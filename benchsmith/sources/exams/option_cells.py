"""Option lines of a scanned page, read cell by cell.

Exam pages set options in columns (``A. 垂直    B. 平行``). Read as one line, OCR runs the
cells together and misreads the markers next to CJK text (``B. 平行`` came out as ``BRT``, and
``C. 7 D. 9`` as ``C.7 DY``); read alone, each cell comes out right. So:

- **text bands** are the page's text lines found from the dark-pixel row profile (OCR's own line
  grouping merged a stem with its option line on a rotated page); OCR words are regrouped by
  the band their centre falls in;
- **cells** of a band are runs of dark columns separated by a gap wider than
  :data:`CELL_GAP_LINES` line heights;
- a band is an **option line** when its first cell, OCR'd alone, starts with a marker
  (``A.``, ``B、``, or a lone letter followed by more cells); each cell's marker is dropped and
  the caller letters the options in order, so a misread marker costs nothing.
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
from PIL import Image, ImageOps

from benchsmith.images.ocr import OcrBackend, OcrResult, join_words

CELL_GAP_LINES = 0.9
MIN_BAND_PX = 8
MARKED = re.compile(r"^\s*[A-H]\s*[.．、:：,，]")
LONE_MARKER = re.compile(r"^[A-Ha-h8][.．、:：,，]?$")
GLUED_MARKER = re.compile(r"^[A-Ha-h8][.．、:：,，]?(.+)$")


def text_bands(mask: np.ndarray) -> list[tuple[int, int]]:
    """(top, bottom) of each run of rows holding dark pixels, at least MIN_BAND_PX tall."""
    rows = mask.sum(axis=1) > max(2, mask.shape[1] // 400)
    bands, start = [], None
    for y, dark in enumerate([*rows.tolist(), False]):
        if dark and start is None:
            start = y
        elif not dark and start is not None:
            if y - start >= MIN_BAND_PX:
                bands.append((start, y))
            start = None
    return bands


def regroup(ocr: OcrResult, bands: list[tuple[int, int]]) -> OcrResult:
    """The same words, their ``line`` the index of the band holding their vertical centre."""
    if not bands:
        return ocr
    centres = np.array([(t + b) / 2 for t, b in bands])
    words = []
    for word in ocr.words:
        middle = (word.box[1] + word.box[3]) / 2
        inside = [k for k, (t, b) in enumerate(bands) if t <= middle <= b]
        line = inside[0] if inside else int(np.argmin(np.abs(centres - middle)))
        words.append(replace(word, line=line))
    return replace(ocr, words=words)


def band_of(bands: list[tuple[int, int]], top: int, bottom: int) -> tuple[int, int]:
    """The text band holding the middle of ``top..bottom`` (or ``top..bottom`` itself)."""
    middle = (top + bottom) / 2
    return next(((t, b) for t, b in bands if t <= middle <= b), (top, bottom))


def band_cells(mask: np.ndarray, top: int, bottom: int) -> list[tuple[int, int]]:
    columns = np.flatnonzero(mask[top:bottom].any(axis=0))
    if columns.size == 0:
        return []
    gap = CELL_GAP_LINES * (bottom - top)
    cells, start, previous = [], int(columns[0]), int(columns[0])
    for x in columns[1:].tolist():
        if x - previous > gap:
            cells.append((start, previous + 1))
            start = x
        previous = x
    cells.append((start, previous + 1))
    return cells


def strip_marker(words: list[str]) -> str:
    if words and LONE_MARKER.match(words[0]):
        words = words[1:]
    elif words and GLUED_MARKER.match(words[0]):
        words = [GLUED_MARKER.match(words[0]).group(1), *words[1:]]  # type: ignore[union-attr]
    return join_words(words).strip()


def read_options(page: Image.Image, mask: np.ndarray, top: int, bottom: int,
                 backend: OcrBackend) -> list[str] | None:  # fmt: skip
    """The option texts of the band (markers dropped), or None when it is not an option line."""
    cells = band_cells(mask, top, bottom)
    if not cells:
        return None
    pad = 6
    texts = []
    for x0, x1 in cells:
        crop = page.crop((max(0, x0 - pad), max(0, top - pad), x1 + pad, bottom + pad))
        result = backend.read_line(ImageOps.expand(crop, 20, fill=255))
        words = [w.text for w in sorted(result.words, key=lambda w: (w.line, w.box[0]))]
        texts.append(words)
        if len(texts) == 1:
            first = words[0] if words else ""
            marked = bool(MARKED.match(join_words(words))) or (
                len(cells) > 1 and first[:1] in "ABCDEFGH" and first[:1] != "")  # fmt: skip
            if not marked:
                return None
    return [strip_marker(words) for words in texts]
