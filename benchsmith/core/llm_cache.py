"""The LLM answer cache: one JSON file per request, named by the request's content hash.

Why a content-addressed disk cache (see :mod:`benchsmith.core.llm`): the key is the sha256 of
exactly what determines an answer (:func:`request_key`), so a rerun, a resumed run or another
machine asking the same model the same thing reads the stored answer instead of asking again.
Entries are written atomically; an unreadable or mismatched entry is logged and treated as a
miss (the model is asked again), and a failed write only loses the caching, never the answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchsmith.core.atomic import atomic_write_json
from benchsmith.core.hashing import canonical_json, sha256_bytes
from benchsmith.core.progress import log

DEFAULT_CACHE_DIR = Path(".benchsmith/llm-cache")
CACHE_FORMAT = 1  # part of the request key: bump it to invalidate every cached answer


def request_key(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """sha256 of what determines the answer: model, messages and sampling params, nothing else."""
    payload = {"format": CACHE_FORMAT, "model": model, "messages": messages, "params": params}
    return sha256_bytes(canonical_json(payload).encode("utf-8"))


class AnswerCache:
    """``cache_dir/<key[:2]>/<key>.json`` entries; ``cache_dir=None`` caches nothing."""

    def __init__(self, cache_dir: str | Path | None):
        self.cache_dir = None if cache_dir is None else Path(cache_dir)

    def path(self, key: str) -> Path | None:
        if self.cache_dir is None:
            return None
        return self.cache_dir / key[:2] / f"{key}.json"

    def read(self, key: str) -> dict[str, Any] | None:
        """The stored entry (with a ``text`` string) for ``key``, or None on a miss."""
        path = self.path(key)
        if path is None or not path.is_file():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
            if entry.get("key") != key or not isinstance(entry.get("text"), str):
                raise ValueError("entry does not match its key")
        except (OSError, ValueError, AttributeError) as exc:
            log(f"warning: LLM cache file {path} is unreadable ({exc}); asking the model again")
            return None
        return entry

    def write(self, key: str, entry: dict[str, Any]) -> None:
        path = self.path(key)
        if path is None:
            return
        try:
            atomic_write_json(path, entry)
        except OSError as exc:  # a full disk must not lose the answer we already have
            log(f"warning: cannot write LLM cache file {path} ({exc}); the answer is not cached")
