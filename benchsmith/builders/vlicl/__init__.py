"""VL-ICL Bench rebuilt from MiniImageNet, CLEVR and rendered operator images.

The original release ships no construction scripts, so ``rebuild`` mode follows our own rules
(spec ``vlicl.md`` §2, one module per task) and lists every choice it makes in
``build_info.json["choices"]`` for the card. ``ingest`` mode (``ingest.py``) reads the official
release instead. Both write the same build directory (``plan.py``; contract in
``notes/vlicl_plan_format.md``), and ``episodes.py`` materialises the few-shot demonstrations.

This module holds the one thing every task module shares: the build-directory row format
(``make_row``, ``image_ref``; provenance entries come from ``core.records.source_ref``) and a cache of image file hashes, so an image
used by several rows (or checked for leakage) is read once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.core.hashing import sha256_file

FAMILY = "vlicl"
SPLITS = ("support", "query")


@dataclass
class TaskRows:
    """Rows of one task, each list sorted by id, plus counters for build_info and the card."""

    support: list[dict[str, Any]]
    query: list[dict[str, Any]]
    stats: dict[str, Any] = field(default_factory=dict)


class ImageHashes:
    """sha256 of image files, computed once per path (a build hashes thousands of images)."""

    def __init__(self) -> None:
        self._cache: dict[Path, str] = {}

    def __call__(self, path: Path) -> str:
        path = Path(path)
        if path not in self._cache:
            self._cache[path] = sha256_file(path)
        return self._cache[path]

    def __len__(self) -> int:
        return len(self._cache)


def image_ref(root: str, file: str, sha256: str) -> dict[str, str]:
    """An ImageRef: ``file`` is relative (posix) to the root named in build_info ``roots``."""
    return {"root": root, "file": file, "sha256": sha256}


def make_row(
    task: str,
    split: str,
    index: str | int,
    *,
    images: list[dict[str, str]],
    question: str,
    answer: str | int,
    extras: dict[str, Any],
    sources: list[dict[str, str]],
) -> dict[str, Any]:
    """A support/query row; an int ``index`` becomes a zero-padded id so ids sort like indices."""
    suffix = f"{index:05d}" if isinstance(index, int) else index
    return {
        "id": f"{task}/{split}/{suffix}",
        "task": task,
        "split": split,
        "images": images,
        "question": question,
        "answer": str(answer),
        "extras": extras,
        "sources": sources,
    }


def relative_posix(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` with ``/`` separators (ImageRef and provenance ``file``)."""
    path, root = Path(path), Path(root)
    try:
        return path.relative_to(root).as_posix()
    except ValueError:  # one of them went through a symlink or is relative to another cwd
        return path.resolve().relative_to(root.resolve()).as_posix()
