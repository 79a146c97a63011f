"""Decontamination: word n-gram overlap between benchmark questions and a reference corpus.

The reference corpus (text a model may have been trained on, other benchmarks, a web dump) is
indexed once as hashed word n-grams; each question is then scored by how many of its own
n-grams occur in the corpus (datatrove's n-gram decontamination, reversed: we filter the
benchmark, not the training set).

* **Normalisation** (:func:`normalize_text`): Unicode NFKC, case-folded, punctuation and symbols
  turned into spaces, whitespace collapsed. Chinese/Japanese characters are split into one
  "word" each, since those scripts do not separate words with spaces (MULTI's exam questions
  are Chinese): an n-gram is then n characters.
* **Grams**: word n-grams (default n = 8). A text shorter than n words is one gram made of all
  its words, but only when it has at least ``min_words`` (default 4) words: shorter texts ("What
  is shown?") match too much to mean anything. Such a short question therefore matches only a
  reference document that is the same short text (e.g. another benchmark's question), not a
  passage inside a longer document: that would need every length from ``min_words`` to n
  indexed.
* **Storage**: each gram is stored as the first 8 bytes of its blake2b digest in one sorted
  ``uint64`` array (8 bytes per distinct gram, however long the corpus text). A chance collision
  needs ~1e9 corpus grams to reach a 5e-11 false-match probability per question gram.
"""

from __future__ import annotations

import gzip
import hashlib
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchsmith.core.errors import SourceError
from benchsmith.core.json_files import read_jsonl
from benchsmith.core.progress import progress

DEFAULT_N = 8
DEFAULT_MIN_WORDS = 4
_COMPACT_EVERY = 1 << 22  # buffered hashes before de-duplicating (bounds memory while reading)
_CJK_RANGES = (
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x2FA1F),  # CJK extensions B-F, compatibility supplement
)


class _CharMap(dict):
    """``str.translate`` table built lazily: punctuation/symbols -> space, CJK -> spaced."""

    def __missing__(self, code: int) -> str | int:
        char = chr(code)
        if unicodedata.category(char)[0] in "PS":
            value: str | int = " "
        elif any(low <= code <= high for low, high in _CJK_RANGES):
            value = f" {char} "
        else:
            value = code
        self[code] = value
        return value


_CHAR_MAP = _CharMap()


def normalize_text(text: str) -> str:
    """NFKC, case-folded, punctuation stripped, CJK split, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.translate(_CHAR_MAP).split())


def text_grams(text: str, n: int = DEFAULT_N, min_words: int = DEFAULT_MIN_WORDS) -> list[str]:
    """The word n-grams of ``text`` (space-joined), or the whole short text as one gram."""
    words = normalize_text(text).split()
    if len(words) < n:
        return [" ".join(words)] if len(words) >= min_words else []
    return [" ".join(words[i : i + n]) for i in range(len(words) - n + 1)]


def gram_hashes(grams: Sequence[str]) -> np.ndarray:
    """First 8 bytes of each gram's blake2b digest, as little-endian uint64."""
    digests = b"".join(hashlib.blake2b(g.encode("utf-8"), digest_size=8).digest() for g in grams)
    return np.frombuffer(digests, dtype="<u8").astype(np.uint64)


@dataclass(frozen=True)
class OverlapResult:
    """``matched`` of the question's ``total`` grams occur in the corpus; ``example`` is the
    first matched gram (normalised text), for the decision log."""

    matched: int
    total: int
    fraction: float
    example: str | None


class NgramIndex:
    """A sorted array of hashed reference n-grams."""

    def __init__(self, hashes: np.ndarray, n: int = DEFAULT_N, min_words: int = DEFAULT_MIN_WORDS):
        if n < 1 or min_words < 1:
            raise ValueError(f"n and min_words must be >= 1, got n={n}, min_words={min_words}")
        self.hashes = np.unique(np.asarray(hashes, dtype=np.uint64))
        self.n = n
        self.min_words = min_words

    def __len__(self) -> int:
        return int(self.hashes.size)

    @classmethod
    def from_texts(
        cls, texts: Iterable[str], n: int = DEFAULT_N, *, min_words: int = DEFAULT_MIN_WORDS
    ) -> NgramIndex:
        """Index in-memory documents (one string per document; grams never cross documents)."""
        buffer = _HashBuffer()
        for text in texts:
            buffer.add(gram_hashes(text_grams(text, n, min_words)))
        return cls(buffer.result(), n, min_words)

    @classmethod
    def from_files(
        cls,
        paths: Iterable[str | Path],
        n: int = DEFAULT_N,
        *,
        min_words: int = DEFAULT_MIN_WORDS,
        text_field: str = "text",
    ) -> NgramIndex:
        """Index reference files: ``.txt`` (the file is one document) or ``.jsonl`` (one JSON
        object per line, its ``text_field`` string is a document), optionally gzipped (``.gz``).
        """
        paths = [Path(p) for p in paths]
        buffer = _HashBuffer()
        for path in progress(paths, total=len(paths), desc="indexing n-grams", unit="file"):
            for text in read_reference_documents(path, text_field):
                buffer.add(gram_hashes(text_grams(text, n, min_words)))
        return cls(buffer.result(), n, min_words)

    def contains(self, hashes: np.ndarray) -> np.ndarray:
        """Boolean mask: which of ``hashes`` are in the index."""
        if self.hashes.size == 0:
            return np.zeros(hashes.shape, dtype=bool)
        position = np.searchsorted(self.hashes, hashes)
        position[position == self.hashes.size] = 0
        return self.hashes[position] == hashes

    def overlap(self, question: str) -> OverlapResult:
        """How many of the question's grams (counted per position) occur in the corpus."""
        grams = text_grams(question, self.n, self.min_words)
        if not grams:
            return OverlapResult(0, 0, 0.0, None)
        found = self.contains(gram_hashes(grams))
        matched = int(found.sum())
        example = grams[int(np.argmax(found))] if matched else None
        return OverlapResult(matched, len(grams), matched / len(grams), example)


class _HashBuffer:
    """Collects hash arrays, de-duplicating every few million so memory tracks distinct grams."""

    def __init__(self) -> None:
        self.parts: list[np.ndarray] = []
        self.pending = 0

    def add(self, hashes: np.ndarray) -> None:
        self.parts.append(hashes)
        self.pending += hashes.size
        if self.pending >= _COMPACT_EVERY:
            self.parts = [self.result()]
            self.pending = 0

    def result(self) -> np.ndarray:
        if not self.parts:
            return np.zeros(0, dtype=np.uint64)
        return np.unique(np.concatenate(self.parts))


def _open_text(path: Path):
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def _kind(path: Path) -> str:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    kind = suffixes[-1] if suffixes else ""
    if kind not in (".txt", ".jsonl"):
        raise SourceError(
            f"unsupported reference corpus file type {''.join(path.suffixes) or '(none)'!r}",
            path=path,
            fix="give .txt files (one document each) or .jsonl files (one object per line), "
            "optionally .gz",
        )
    return kind


def read_reference_documents(path: str | Path, text_field: str = "text") -> Iterator[str]:
    """Documents of one reference file; unreadable or malformed input raises SourceError
    naming the file (and the line, for .jsonl)."""
    path = Path(path)
    kind = _kind(path)
    if not path.is_file():
        raise SourceError("reference corpus file not found", path=path, fix="check the path")
    if kind == ".jsonl":
        fix = "each line of a .jsonl file must be one JSON object with a string text field"
        for number, record in read_jsonl(path, what="reference corpus", fix=fix, error=SourceError):
            yield _record_text(record, number, path, text_field)
        return
    try:
        with _open_text(path) as handle:
            yield handle.read()
    except (UnicodeDecodeError, OSError, EOFError) as exc:
        raise SourceError(
            f"cannot read reference corpus file ({type(exc).__name__}: {exc})",
            path=path,
            fix="the file must be UTF-8 text (gzip-compressed if it ends in .gz); re-export it",
        ) from exc


def _record_text(record: object, number: int, path: Path, text_field: str) -> str:
    value = record.get(text_field) if isinstance(record, dict) else None
    if not isinstance(value, str):
        raise SourceError(
            f"line {number}: no string field {text_field!r}",
            path=path,
            fix=f"give every record a string {text_field!r} field, or choose the field that "
            "holds the text (text_field)",
        )
    return value


def find_contaminated(
    questions: Mapping[str, str],
    index: NgramIndex,
    min_fraction: float = 0.0,
    min_matches: int = 1,
) -> dict[str, OverlapResult]:
    """Samples whose question has ``>= min_matches`` grams in the corpus and at least
    ``min_fraction`` of its grams there; in the input order of ``questions``."""
    found = {}
    for sample_id, question in questions.items():
        result = index.overlap(question)
        if result.total and result.matched >= min_matches and result.fraction >= min_fraction:
            found[sample_id] = result
    return found
