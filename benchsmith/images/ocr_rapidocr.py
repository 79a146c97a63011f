"""RapidOCR: the default OCR engine, because everything it needs installs with pip.

The ``rapidocr`` wheel carries PaddleOCR's PP-OCRv6 detection and recognition models as ONNX
files (they read simplified Chinese and English), and ``onnxruntime`` runs them on the CPU: no
system program, no download at run time. ``bench/ocr_pages.py`` measures it beside Tesseract on
the sample scanned pages (README, *OCR engines*).

What benchsmith fixes, and why:

- **The bundled model files, by path.** Given no path, RapidOCR may fetch a model or its
  character list from the network; given these, it never does. Their sha256 goes into the
  engine's identity, so the OCR cache and the build know which models read a page.
- **No text-direction classifier.** The page reader deskews pages itself, and a crop flipped by a
  wrong guess would be read upside down.
- **One ONNX Runtime thread.** Pages are read in parallel by worker processes; threads inside
  each would compete with them (one thread was as fast as two on the sample pages).
- **A line is recognised, not searched.** An option cell the page reader crops holds one line;
  finding text on it first would scale the crop up to 736 px and cost half a second a cell, so
  :meth:`read_line` runs the recogniser alone (its words get boxes in proportion to where they
  sit in the text).
- **Words, not just lines.** RapidOCR returns text lines; with word boxes turned on it also says
  where each Latin word and each CJK character sits. The page reader places printed blanks by x
  position, so a line becomes words: CJK characters one by one, Latin pieces merged back where
  the line's text has no space between them (``4`` and ``.`` are ``4.``).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from benchsmith.images.ocr import (
    DEFAULT_LANGUAGES,
    Box,
    OcrBackend,
    OcrResult,
    OcrUnavailable,
    OcrWord,
    assign_lines,
    is_cjk,
)

DETECTION_MODEL = "PP-OCRv6_det_small.onnx"
RECOGNITION_MODEL = "PP-OCRv6_rec_small.onnx"
REINSTALL = "pip install --force-reinstall 'rapidocr==3.10.0' onnxruntime (benchsmith's own deps)"


def _corner_box(corners: Any) -> Box:
    points = np.asarray(corners, dtype=np.float64).reshape(-1, 2)
    left, top = np.floor(points.min(axis=0)).astype(int).tolist()
    right, bottom = np.ceil(points.max(axis=0)).astype(int).tolist()
    return (left, top, right, bottom)


def _union(a: Box, b: Box) -> Box:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def line_words(text: str, box: Box, score: float, pieces: Any) -> list[tuple[str, Box, float]]:
    """A detected line as (word, box, confidence): the engine's word pieces in order, two
    non-CJK pieces merged where ``text`` runs them together. When the pieces do not spell the
    line's text, the line is one word (its box and score), so nothing read is ever lost."""
    words: list[tuple[str, Box, float]] = []
    cursor, glued = 0, False
    for piece in pieces or ():
        piece_text, piece_score, corners = str(piece[0]), float(piece[1]), piece[2]
        if corners is None or not piece_text.strip():
            return [(text.strip(), box, score)]
        start = cursor
        while start < len(text) and text[start].isspace():
            start += 1
        if not text.startswith(piece_text, start):
            return [(text.strip(), box, score)]
        glued = start == cursor and cursor > 0
        cursor = start + len(piece_text)
        piece_box = _corner_box(corners)
        if words and glued and not is_cjk(words[-1][0][-1]) and not is_cjk(piece_text[0]):
            previous, previous_box, previous_score = words[-1]
            words[-1] = (previous + piece_text, _union(previous_box, piece_box),
                         min(previous_score, piece_score))  # fmt: skip
        else:
            words.append((piece_text, piece_box, piece_score))
    if not words or text[cursor:].strip():
        return [(text.strip(), box, score)]
    return words


@cache
def installed_versions() -> str:
    """RapidOCR's and ONNX Runtime's versions, read once per process (every read names them)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        rapidocr, onnxruntime = version("rapidocr"), version("onnxruntime")
    except PackageNotFoundError as exc:
        raise OcrUnavailable(f"the {exc.name} package is not installed", fix=REINSTALL) from exc
    return f"{rapidocr} (onnxruntime {onnxruntime})"


class RapidOcrBackend(OcrBackend):
    name = "rapidocr"

    def __init__(self, languages: tuple[str, ...] = DEFAULT_LANGUAGES):
        super().__init__(languages)
        self._engine = None

    def version(self) -> str:
        return installed_versions()

    def model_files(self) -> list[Path]:
        self.version()
        import rapidocr

        unread = [lang for lang in self.languages if lang not in DEFAULT_LANGUAGES]
        if unread:
            raise OcrUnavailable(
                f"rapidocr's bundled models read {'+'.join(DEFAULT_LANGUAGES)}, not {unread}",
                fix="use --backend tesseract with that language's data installed",
            )
        folder = Path(rapidocr.__file__).parent / "models"
        files = [folder / DETECTION_MODEL, folder / RECOGNITION_MODEL]
        missing = [f.name for f in files if not f.is_file()]
        if missing:
            raise OcrUnavailable(
                f"rapidocr {self.version()} does not ship the models benchsmith reads "
                f"({', '.join(missing)})",
                path=folder,
                fix=REINSTALL,
            )
        return files

    def _engine_or_error(self):
        if self._engine is None:
            from rapidocr import RapidOCR

            detection, recognition = self.model_files()
            self._engine = RapidOCR(params={
                "Global.use_cls": False,
                "Global.return_word_box": True,
                "Global.log_level": "error",
                "Det.model_path": str(detection),
                "Rec.model_path": str(recognition),
                "EngineConfig.onnxruntime.intra_op_num_threads": 1,
                "EngineConfig.onnxruntime.inter_op_num_threads": 1,
                # ONNX Runtime's memory arena: buffers reused from page to page instead of
                # allocated per run (about 12% faster a page here, 90 MB more at its peak;
                # the same text)
                "EngineConfig.onnxruntime.enable_cpu_mem_arena": True,
            })  # fmt: skip
        return self._engine

    def read(self, image: Image.Image) -> OcrResult:
        identity = self.identity()
        # every call names its steps: RapidOCR keeps the last call's choice as its default
        found = self._engine_or_error()(np.asarray(image.convert("RGB")), use_det=True,
                                        use_cls=False, use_rec=True)  # fmt: skip
        if found.txts is None or found.boxes is None:
            return OcrResult(identity, [])
        texts, boxes, scores = list(found.txts), list(found.boxes), list(found.scores)
        pieces = list(found.word_results or ())
        if len(pieces) != len(texts):  # word boxes missing for a line: lines as words
            pieces = [None] * len(texts)
        line_boxes = [_corner_box(b) for b in boxes]
        lines = assign_lines(line_boxes)
        words = [
            OcrWord(word, box, confidence, line)
            for text, line_box, score, piece, line in zip(
                texts, line_boxes, scores, pieces, lines, strict=True
            )  # fmt: skip
            for word, box, confidence in line_words(str(text), line_box, float(score), piece)
        ]
        return OcrResult(identity, sorted(words, key=lambda w: (w.line, w.box[0])))

    def read_line(self, image: Image.Image) -> OcrResult:
        identity = self.identity()
        found = self._engine_or_error()(np.asarray(image.convert("RGB")), use_det=False,
                                        use_cls=False, use_rec=True)  # fmt: skip
        text = str(found.txts[0]) if found.txts else ""
        score = float(found.scores[0]) if found.scores else 0.0
        width, height = image.size
        words, start = [], 0
        for word in text.split():
            start = text.index(word, start)
            left = int(width * start / len(text))
            start += len(word)
            words.append(OcrWord(word, (left, 0, int(width * start / len(text)), height), score, 0))
        return OcrResult(identity, words)
