"""The one OCR interface (ARCHITECTURE.md contract 6): what every engine returns and promises.

An engine (:mod:`.ocr_engines` lists them) reads a page image into an :class:`OcrResult`: words
with boxes and confidences, grouped into lines in reading order, and the text (lines joined by
newlines; no space between two CJK characters, one between Latin words). An engine that cannot
run says why and how to fix it (:class:`OcrUnavailable`), never a traceback from inside the
engine, and never downloads anything: its models ship with a package or are supplied by the user.

Results are plain data, so callers cache them by the image's sha256 plus
:meth:`OcrBackend.identity`: the engine, its version and the sha256 of every model file it reads.
A rerun with the same engine reads nothing twice, and a changed model file is never served a
stale result.
"""

from __future__ import annotations

import os
import re
import unicodedata
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from PIL import Image

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import sha256_file

DEFAULT_LANGUAGES = ("chi_sim", "eng")
Box = tuple[int, int, int, int]  # left, top, right, bottom (pixels)


class OcrUnavailable(BenchsmithError):
    """The OCR engine (or its language data, or its models) is not installed."""


@dataclass(frozen=True)
class OcrWord:
    text: str
    box: Box
    confidence: float  # 0..1
    line: int  # index of its line in reading order


@dataclass(frozen=True)
class OcrResult:
    backend: str  # engine identity (name, version, languages, model files)
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


CER_LEVELS = ("raw", "whitespace", "punctuation")


def normalise_for_cer(text: str, level: str = "whitespace") -> str:
    """The characters a reader must get right, at one of :data:`CER_LEVELS`:

    - ``raw``: the text as it is (line breaks and spaces count);
    - ``whitespace`` (what the build reports): NFKC, whitespace removed, so a full-width comma
      equals a half-width one and a missing space between two words costs nothing;
    - ``punctuation``: also every punctuation mark removed, so only letters, digits and
      characters count.
    """
    if level == "raw":
        return text
    if level not in CER_LEVELS:
        raise ValueError(f"unknown CER level {level!r}: use one of {CER_LEVELS}")
    folded = re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))
    if level == "punctuation":
        folded = "".join(c for c in folded if not unicodedata.category(c).startswith("P"))
    return folded


def character_error_rate(hypothesis: str, reference: str, level: str = "whitespace") -> float:
    """Edit distance between the two texts over the reference length, both normalised at
    ``level`` (:func:`normalise_for_cer`)."""
    from benchsmith.core.text_distance import levenshtein

    ref, hyp = normalise_for_cer(reference, level), normalise_for_cer(hypothesis, level)
    if not ref:
        return 0.0 if not hyp else 1.0
    return levenshtein(hyp, ref) / len(ref)


def assign_lines(boxes: Sequence[Box]) -> list[int]:
    """The reading-order line of each box: boxes sorted top to bottom, and a box whose vertical
    centre lies inside the current line's span joins it. For engines that return text lines
    or words without grouping them (a line cut in two by a blank is still one line)."""
    order = sorted(range(len(boxes)), key=lambda k: (boxes[k][1], boxes[k][0]))
    lines = [0] * len(boxes)
    line, top, bottom = -1, None, None
    for k in order:
        left, box_top, right, box_bottom = boxes[k]
        middle = (box_top + box_bottom) / 2
        if top is None or not (top <= middle <= bottom):
            line, top, bottom = line + 1, box_top, box_bottom
        else:
            top, bottom = min(top, box_top), max(bottom, box_bottom)
        lines[k] = line
    return lines


@cache
def _file_sha256(path: str, size: int, mtime_ns: int) -> str:
    return sha256_file(path)


def model_digest(path: str | Path) -> str:
    """The sha256 of a model file, computed once per process (keyed by size and mtime)."""
    stat = os.stat(path)
    return _file_sha256(str(path), stat.st_size, stat.st_mtime_ns)


class OcrBackend(ABC):
    """One OCR engine: how it reads an image, and which files its result depends on."""

    name: str

    def __init__(self, languages: tuple[str, ...] = DEFAULT_LANGUAGES):
        self.languages = tuple(languages)

    @abstractmethod
    def version(self) -> str:
        """The engine's version; raises :class:`OcrUnavailable` when it is not installed."""

    @abstractmethod
    def model_files(self) -> list[Path]:
        """The model (or language data) files a result depends on; raises
        :class:`OcrUnavailable` when one is missing."""

    def identity(self) -> str:
        """What a cached result depends on: engine, version, languages, model files by
        content (the first 12 hex digits of each file's sha256)."""
        models = ",".join(f"{p.name}:{model_digest(p)[:12]}" for p in self.model_files())
        return f"{self.name} {self.version()} [{'+'.join(self.languages)}] {{{models}}}"

    @abstractmethod
    def read(self, image: Image.Image) -> OcrResult:
        """Every word on the image, in reading order."""

    def read_line(self, image: Image.Image) -> OcrResult:
        """The words of an image that holds one line of text (a cropped option cell). An
        engine that can skip finding text on such a crop says so by overriding this."""
        return self.read(image)
