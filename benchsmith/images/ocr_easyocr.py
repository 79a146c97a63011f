"""EasyOCR with the user's own weights: the engine the project's design names as optional.

EasyOCR needs PyTorch and its model weights, which it would download from the network on first
use; benchsmith never lets it (``download_enabled=False``). The user installs the extra
(``pip install 'benchsmith[ocr-easyocr]'``) and points ``EASYOCR_MODULE_PATH`` (or
``model_dir``) at a folder holding the weights; their sha256 goes into the engine's identity.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from PIL import Image

from benchsmith.images.ocr import (
    DEFAULT_LANGUAGES,
    OcrBackend,
    OcrResult,
    OcrUnavailable,
    OcrWord,
    assign_lines,
)

LANGUAGES = {"chi_sim": "ch_sim", "eng": "en"}


class EasyOcrBackend(OcrBackend):
    """EasyOCR with the user's weights; ``model_dir`` defaults to ``$EASYOCR_MODULE_PATH``."""

    name = "easyocr"
    WEIGHTS = ("craft_mlt_25k.pth", "zh_sim_g2.pth")

    def __init__(self, languages=DEFAULT_LANGUAGES, model_dir: str | Path | None = None):
        super().__init__(languages)
        folder = model_dir or os.environ.get("EASYOCR_MODULE_PATH")
        self.model_dir = Path(folder) if folder else None
        self._reader = None

    def version(self) -> str:
        try:
            import easyocr
        except ImportError as exc:
            raise OcrUnavailable(
                "the easyocr package is not installed",
                fix="pip install 'benchsmith[ocr-easyocr]' (and supply its model weights), or "
                "use the default engine: --backend rapidocr",
            ) from exc
        return str(getattr(easyocr, "__version__", "unknown"))

    def _weights_folder(self) -> Path:
        folder = self.model_dir
        if folder is not None and (folder / "model").is_dir():
            folder = folder / "model"
        missing = [w for w in self.WEIGHTS if folder is None or not (folder / w).is_file()]
        if missing:
            raise OcrUnavailable(
                f"EasyOCR needs its model weights {missing}, which benchsmith never downloads "
                f"(looked in {self.model_dir or '$EASYOCR_MODULE_PATH, unset'})",
                fix="put the weights in a folder and set EASYOCR_MODULE_PATH to it, or use the "
                "default engine: --backend rapidocr",
            )
        assert folder is not None
        return folder

    def model_files(self) -> list[Path]:
        self.version()
        folder = self._weights_folder()
        return [folder / w for w in self.WEIGHTS]

    def _reader_or_error(self):
        folder = self._weights_folder()
        if self._reader is None:
            import easyocr

            langs = [LANGUAGES.get(lang, lang) for lang in self.languages]
            self._reader = easyocr.Reader(langs, gpu=False, download_enabled=False,
                                          model_storage_directory=str(folder))  # fmt: skip
        return self._reader

    def read(self, image: Image.Image) -> OcrResult:
        identity = self.identity()
        found = self._reader_or_error().readtext(np.asarray(image.convert("RGB")))
        boxes, texts, confidences = [], [], []
        for corners, text, confidence in found:
            xs, ys = [int(p[0]) for p in corners], [int(p[1]) for p in corners]
            boxes.append((min(xs), min(ys), max(xs), max(ys)))
            texts.append(str(text))
            confidences.append(float(confidence))
        lines = assign_lines(boxes)
        words = [OcrWord(t, b, c, n) for t, b, c, n in zip(texts, boxes, confidences, lines,
                                                            strict=True)]  # fmt: skip
        return OcrResult(identity, sorted(words, key=lambda w: (w.line, w.box[0])))
