"""A lock file pinning the size and sha256 of every downloaded source archive.

The first download records what the server sent; every later download is verified against
that record, so a silently changed upstream file (or a corrupt mirror) is caught instead of
quietly changing the benchmark. The lock is meant to be committed next to ``params.yaml``.

Format (sorted keys)::

    {"http://images.cocodataset.org/zips/val2014.zip":
        {"file": "val2014.zip", "sha256": "...", "size": 6645013297}}
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchsmith.core.atomic import atomic_write_json
from benchsmith.core.errors import SourceError
from benchsmith.core.hashing import sha256_file

DEFAULT_LOCK_PATH = Path("coco.lock.json")
_FIX = "restore the lock file from version control, or delete it to re-record on the next download"


def read_lock(path: str | Path) -> dict[str, dict[str, Any]]:
    """The lock's entries by URL; an absent lock file is an empty lock."""
    path = Path(path)
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SourceError(f"lock file is not valid JSON ({exc})", path=path, fix=_FIX) from exc
    if not isinstance(data, dict):
        raise SourceError("lock file must hold a JSON object keyed by URL", path=path, fix=_FIX)
    for url, entry in data.items():
        if not _valid_entry(entry):
            raise SourceError(
                f"lock entry for {url} must be {{'file': str, 'size': int, 'sha256': str}}",
                path=path,
                fix=_FIX,
            )
    return data


def record(path: str | Path, url: str, file_path: str | Path) -> dict[str, Any]:
    """Hash ``file_path`` and store it as the expected content of ``url``; returns the entry."""
    file_path = Path(file_path)
    lock = read_lock(path)
    entry = {
        "file": file_path.name,
        "size": file_path.stat().st_size,
        "sha256": sha256_file(file_path),
    }
    lock[url] = entry
    atomic_write_json(path, lock)
    return entry


def expected_for(lock: dict[str, dict[str, Any]], url: str) -> tuple[int | None, str | None]:
    """(size, sha256) recorded for ``url``, or (None, None) when it was never downloaded."""
    entry = lock.get(url)
    if entry is None:
        return None, None
    return int(entry["size"]), str(entry["sha256"])


def _valid_entry(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("file"), str)
        and isinstance(entry.get("size"), int)
        and not isinstance(entry.get("size"), bool)
        and isinstance(entry.get("sha256"), str)
        and len(entry["sha256"]) == 64
    )
