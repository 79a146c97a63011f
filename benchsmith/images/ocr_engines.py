"""The OCR engines behind the one interface (:mod:`.ocr`), by name.

``rapidocr`` is the default because its models ship inside its wheel: a machine with Python
alone reads the exam pages. ``tesseract`` needs the system program and its language data;
``easyocr`` needs the optional extra and weights the user supplies. Each is chosen with
``--backend`` or ``multi.ocr.backend``. Entries load on use, so listing the names (for ``--help``
or the params schema) imports no engine.
"""

from __future__ import annotations

from typing import Any

from benchsmith.core.registry import Entry, Registry

ENGINES = Registry(
    "OCR backend",
    Entry("rapidocr", "benchsmith.images.ocr_rapidocr", "RapidOcrBackend"),
    Entry("tesseract", "benchsmith.images.ocr_tesseract", "TesseractBackend"),
    Entry("easyocr", "benchsmith.images.ocr_easyocr", "EasyOcrBackend"),
)
BACKENDS = tuple(ENGINES.names())
DEFAULT_BACKEND = BACKENDS[0]


def ocr_backend(name: str = DEFAULT_BACKEND, **options: Any):
    """The engine called ``name`` (an :class:`~benchsmith.images.ocr.OcrBackend`); its models
    load when it first reads."""
    return ENGINES.get(name)(**options)
