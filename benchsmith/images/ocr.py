"""The one OCR interface (ARCHITECTURE.md contract 6), with two backends.

- ``tesseract`` (the default): Tesseract 5 through ``pytesseract``, offline, with the Debian
  packages ``tesseract-ocr`` and ``tesseract-ocr-chi-sim`` (``.ci/run`` installs them);
- ``easyocr``: the ``easyocr`` package (``pip install '.[ocr-easyocr]'``) with model weights the
  user supplies (``EASYOCR_MODULE_PATH`` or ``model_dir``); nothing is downloaded.

Both return an :class:`OcrResult`: words with boxes and confidences, grouped into lines in
reading order, and the text (lines joined by newlines; no space between two CJK characters,
one between Latin words). A backend that cannot run says why and how to fix it
(:class:`OcrUnavailable`), never a traceback from inside the engine. Results are plain data, so
callers cache them by the image's sha256 plus :meth:`OcrBackend.identity` (engine, version,
languages), and a rerun with the same engine reads nothing twice.
"""

from __future__ import annotations

import os
import re
import unicodedata
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image

from benchsmith.core.errors import BenchsmithError

BACKENDS = ("tesseract", "easyocr")
DEFAULT_LANGUAGES = ("chi_sim", "eng")
EASYOCR_LANGUAGES = {"chi_sim": "ch_sim", "eng": "en"}


class OcrUnavailable(BenchsmithError):
    """The OCR engine (or its language data, or its weights) is not installed."""


@dataclass(frozen=True)
class OcrWord:
    text: str
    box: tuple[int, int, int, int]  # left, top, right, bottom (pixels)
    confidence: float  # 0..1
    line: int  # index of its line in reading order


@dataclass(frozen=True)
class OcrResult:
    backend: str  # engine identity (name, version, languages)
    words: list[OcrWord] = field(default_factory=list)

    @property
    def lines(self) -> list[str]:
        grouped: dict[int, list[OcrWord]] = {}
        for word in self.words:
            grouped.setdefault(word.line, []).append(word)
        return [join_words([w.text for w in grouped[k]]) for k in sorted(grouped)]

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def as_dict(self) -> dict[str, Any]:
        return {"backend": self.backend, "words": [asdict(w) for w in self.words]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OcrResult:
        words = [OcrWord(w["text"], tuple(w["box"]), w["confidence"], w["line"])
                 for w in data["words"]]  # fmt: skip
        return cls(data["backend"], words)


def is_cjk(character: str) -> bool:
    return unicodedata.east_asian_width(character) in ("W", "F")


def join_words(words: list[str]) -> str:
    """Words of one line as text: CJK characters touch, anything else gets one space."""
    out = ""
    for word in (w.strip() for w in words):
        if not word:
            continue
        if out and not (is_cjk(out[-1]) or is_cjk(word[0])):
            out += " "
        out += word
    return out


def normalise_for_cer(text: str) -> str:
    """NFKC, whitespace removed: the characters a reader must get right."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def character_error_rate(hypothesis: str, reference: str) -> float:
    """Edit distance between the two texts (whitespace ignored) over the reference length."""
    from benchsmith.scoring.metrics import levenshtein

    ref, hyp = normalise_for_cer(reference), normalise_for_cer(hypothesis)
    if not ref:
        return 0.0 if not hyp else 1.0
    return levenshtein(hyp, ref) / len(ref)


class OcrBackend(ABC):
    name: str

    def __init__(self, languages: tuple[str, ...] = DEFAULT_LANGUAGES):
        self.languages = tuple(languages)

    @abstractmethod
    def version(self) -> str: ...

    def identity(self) -> str:
        """What a cached result depends on: engine, version, languages."""
        return f"{self.name} {self.version()} [{'+'.join(self.languages)}]"

    @abstractmethod
    def read(self, image: Image.Image) -> OcrResult: ...


class TesseractBackend(OcrBackend):
    name = "tesseract"
    PAGE_MODE = 6  # one uniform block of text: an exam page column

    def version(self) -> str:
        import pytesseract

        try:
            return str(pytesseract.get_tesseract_version())
        except (pytesseract.TesseractNotFoundError, OSError) as exc:
            raise OcrUnavailable(
                "the tesseract program is not installed",
                fix="install it: apt-get install tesseract-ocr tesseract-ocr-chi-sim "
                "(or choose another OCR backend)",
            ) from exc

    def _check_languages(self) -> None:
        import pytesseract

        installed = set(pytesseract.get_languages(config=""))
        missing = [lang for lang in self.languages if lang not in installed]
        if missing:
            raise OcrUnavailable(
                f"tesseract has no language data for {missing} (installed: {sorted(installed)})",
                fix="install it: apt-get install "
                + " ".join(f"tesseract-ocr-{m.replace('_', '-')}" for m in missing),
            )

    def read(self, image: Image.Image) -> OcrResult:
        import pytesseract

        identity = self.identity()
        self._check_languages()
        # Tesseract's own OpenMP threads make it slower on a page this size (1.06 vs 1.73
        # pages/s here, bench/ocr_pages.py) and compete with worker processes: one thread
        # each, unless the user set OMP_THREAD_LIMIT.
        os.environ.setdefault("OMP_THREAD_LIMIT", "1")
        data = pytesseract.image_to_data(
            image.convert("RGB"),
            lang="+".join(self.languages),
            config=f"--psm {self.PAGE_MODE}",
            output_type=pytesseract.Output.DICT,
        )
        lines: dict[tuple[int, int, int], int] = {}
        words = []
        for k, text in enumerate(data["text"]):
            if not str(text).strip() or float(data["conf"][k]) < 0:
                continue
            key = (data["block_num"][k], data["par_num"][k], data["line_num"][k])
            line = lines.setdefault(key, len(lines))
            left, top = int(data["left"][k]), int(data["top"][k])
            box = (left, top, left + int(data["width"][k]), top + int(data["height"][k]))
            words.append(OcrWord(str(text), box, float(data["conf"][k]) / 100.0, line))
        return OcrResult(identity, words)


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
                "use the tesseract backend",
            ) from exc
        return str(getattr(easyocr, "__version__", "unknown"))

    def _reader_or_error(self):
        self.version()
        folder = self.model_dir
        missing = [w for w in self.WEIGHTS if folder is None or not (folder / "model" / w).is_file()
                   and not (folder / w).is_file()]  # fmt: skip
        if missing:
            raise OcrUnavailable(
                f"EasyOCR needs its model weights {missing}, which benchsmith never downloads "
                f"(looked in {folder or '$EASYOCR_MODULE_PATH, unset'})",
                fix="put the weights in a folder and set EASYOCR_MODULE_PATH to it, or use the "
                "tesseract backend",
            )
        if self._reader is None:
            import easyocr

            assert folder is not None
            root = folder / "model" if (folder / "model").is_dir() else folder
            langs = [EASYOCR_LANGUAGES.get(lang, lang) for lang in self.languages]
            self._reader = easyocr.Reader(langs, gpu=False, download_enabled=False,
                                          model_storage_directory=str(root))  # fmt: skip
        return self._reader

    def read(self, image: Image.Image) -> OcrResult:
        import numpy as np

        reader = self._reader_or_error()
        found = reader.readtext(np.asarray(image.convert("RGB")))
        words, line, last_bottom = [], -1, None
        for corners, text, confidence in sorted(found, key=lambda r: (r[0][0][1], r[0][0][0])):
            xs, ys = [int(p[0]) for p in corners], [int(p[1]) for p in corners]
            box = (min(xs), min(ys), max(xs), max(ys))
            if last_bottom is None or box[1] > last_bottom - (box[3] - box[1]) / 2:
                line += 1
            last_bottom = box[3]
            words.append(OcrWord(str(text), box, float(confidence), line))
        return OcrResult(self.identity(), words)


def ocr_backend(name: str = "tesseract", **options: Any) -> OcrBackend:
    if name == "tesseract":
        return TesseractBackend(**options)
    if name == "easyocr":
        return EasyOcrBackend(**options)
    raise BenchsmithError(f"unknown OCR backend {name!r}", fix=f"use one of {', '.join(BACKENDS)}")
