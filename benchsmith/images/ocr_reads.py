"""An OCR engine's reads kept on disk, by the pixels read and the engine's identity.

The MULTI ``ocr`` step caches each page's questions by the page, the engine and the page reader's
code (:func:`benchsmith.builders.multi.convert.reader_digest`): an edit to the reader (deskew,
blanks, option cells) invalidates every page. Reading the page again is two parts: the reader's
own work (milliseconds) and the engine's (about a second a page with RapidOCR). This keeps the
second part: each image the engine was given, whole page or cropped line, is remembered by its
pixels (mode, size, bytes) and :meth:`OcrBackend.identity` (engine, version, languages, model files
by content), so a changed reader re-runs on the same engine output and reads nothing twice, and a
changed model or engine is never served an old read.

A remembered read is the engine's result as plain data; a damaged entry is read again (and
written again), an engine error is never remembered, and writes are atomic, so parallel workers
that read the same crop agree.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from PIL import Image

from benchsmith.core.atomic import atomic_write_json
from benchsmith.images.ocr import OcrBackend, OcrResult


def read_key(identity: str, kind: str, image: Image.Image) -> str:
    """The sha256 naming one read: the engine, whether a page or a line, and the pixels."""
    digest = hashlib.sha256(f"{identity}|{kind}|{image.mode}|{image.size}|".encode())
    digest.update(image.tobytes())
    return digest.hexdigest()


class RememberedReads(OcrBackend):
    """``engine``, with every read kept in ``folder`` (``<2 hex>/<sha256>.json``).

    It answers to the engine's name, version, models and identity, so whatever records them
    (the OCR cache key, the converted records' ``engine``) is the same with or without it.
    ``reads`` and ``reused`` count what this object did (a run reports them)."""

    def __init__(self, engine: OcrBackend, folder: str | Path):
        super().__init__(engine.languages)
        self.engine = engine
        self.name = engine.name
        self.folder = Path(folder)
        self.reads = 0
        self.reused = 0

    def version(self) -> str:
        return self.engine.version()

    def model_files(self) -> list[Path]:
        return self.engine.model_files()

    def identity(self) -> str:
        return self.engine.identity()

    def read(self, image: Image.Image) -> OcrResult:
        return self._remembered("page", image, self.engine.read)

    def read_line(self, image: Image.Image) -> OcrResult:
        return self._remembered("line", image, self.engine.read_line)

    def _remembered(self, kind: str, image: Image.Image, read) -> OcrResult:
        key = read_key(self.identity(), kind, image)
        entry = self.folder / key[:2] / f"{key}.json"
        if entry.is_file():
            try:
                result = OcrResult.from_dict(json.loads(entry.read_text(encoding="utf-8")))
            except (ValueError, KeyError, TypeError):
                result = None  # damaged (a disk fault, a hand edit): read the image again
            if result is not None and result.backend == self.identity():
                self.reused += 1
                return result
        result = read(image)
        atomic_write_json(entry, result.as_dict())
        self.reads += 1
        return result
