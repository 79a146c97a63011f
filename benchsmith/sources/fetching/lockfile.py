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
import os
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from benchsmith.core.atomic import atomic_write_json
from benchsmith.core.errors import SourceError
from benchsmith.core.hashing import sha256_file
from benchsmith.core.progress import log
from benchsmith.sources.fetching.archive import check_zip
from benchsmith.sources.fetching.download import ChecksumMismatch, download_file

DEFAULT_LOCK_PATH = Path("coco.lock.json")
_FIX = "restore the lock file from version control, or delete it to re-record on the next download"


def _lock_object(path: Path) -> dict[str, Any]:
    """A lock file's JSON object (any source's: keyed by URL, release path or file name)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SourceError(f"lock file is not valid JSON ({exc})", path=path, fix=_FIX) from exc
    if not isinstance(data, dict):
        raise SourceError("lock file must hold a JSON object keyed by what it pins", path=path,
                          fix=_FIX)  # fmt: skip
    return data


def read_lock(path: str | Path) -> dict[str, dict[str, Any]]:
    """The lock's entries by URL; an absent lock file is an empty lock."""
    path = Path(path)
    if not path.exists():
        return {}
    data = _lock_object(path)
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


def download_locked(
    url: str,
    download_dir: Path,
    lock_path: Path,
    *,
    rerun: str,
    archive_name: str | None = None,
) -> tuple[Path, str]:
    """Download ``url`` verified against the lock; record it there on first download.

    Returns (path, sha256). ``rerun`` names how the user fetches again (e.g. "the CLEVR
    fetch") and ``archive_name`` the file the URL should end in, so each source's errors
    point at its own command.
    """
    name = PurePosixPath(urlsplit(url).path).name
    if not name:
        example = f" ({archive_name})" if archive_name else ""
        raise SourceError(
            f"cannot name the download: {url} has no file name",
            fix=f"pass a URL that ends in the archive's file name{example}",
        )
    size, sha256 = expected_for(read_lock(lock_path), url)
    try:
        path = download_file(
            url, download_dir / name, expected_sha256=sha256, expected_size=size, desc=name
        )
    except ChecksumMismatch as exc:
        raise SourceError(
            f"{name} does not match the checksum recorded in {lock_path} for {url}",
            path=exc.path,
            fix=(
                f"delete {exc.path} and rerun {rerun}; if the file really changed "
                f"upstream, accept the new version by clearing its pin: "
                f"{rerun.replace(' fetch ', ' unpin ').rstrip('`')} {url} --lock {lock_path}`"
            ),
        ) from exc
    if sha256 is None:
        _check_before_pinning(path, url, rerun)
        sha256 = record(lock_path, url, path)["sha256"]
        log(f"recorded {name} ({path.stat().st_size} bytes) in {lock_path}")
    return path, sha256


def _check_before_pinning(path: Path, url: str, rerun: str) -> None:
    """A first download is pinned only once it is a zip benchsmith can trust (it opens, its
    members are safe and where the directory says). A refused file is moved aside to
    ``NAME.refused`` (kept for inspection, never pinned), so a rerun downloads it afresh."""
    refused = path.with_name(path.name + ".refused")
    try:
        check_zip(path)
    except SourceError as exc:
        os.replace(path, refused)
        raise SourceError(
            f"{path.name} from {url} was refused and not recorded in the lock: "
            f"{str(exc).splitlines()[0]}",
            path=refused,
            fix=f"check the URL (it must serve the zip archive) and rerun {rerun}; the refused "
            f"file was kept as {refused.name} for inspection"
            + (f" ({exc.fix})" if exc.fix and "archives." in exc.fix else ""),
        ) from exc


def _valid_entry(entry: object) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("file"), str)
        and isinstance(entry.get("size"), int)
        and not isinstance(entry.get("size"), bool)
        and isinstance(entry.get("sha256"), str)
        and len(entry["sha256"]) == 64
    )


def _existing_lock(lock_path: Path) -> Path:
    if not lock_path.is_file():
        raise SourceError("no lock file here: nothing is pinned", path=lock_path,
                          fix="pass --lock with the source's lock file (params.yaml names it)")  # fmt: skip
    return lock_path


def pinned(lock_path: str | Path) -> list[str]:
    """What a lock file pins (an error when there is no lock file)."""
    return list(_lock_object(_existing_lock(Path(lock_path))))


def unpin(lock_path: str | Path, entries: list[str], *, everything: bool = False) -> list[str]:
    """Remove ``entries`` (or every entry) from a source's lock file, so the next fetch
    downloads and pins them afresh; returns what was removed. Any source's lock works: each is
    a JSON object keyed by what it pins (a URL, a release path, a file name)."""
    lock_path = Path(lock_path)
    data = _lock_object(_existing_lock(lock_path))
    chosen = list(data) if everything else entries
    unknown = [e for e in chosen if e not in data]
    if unknown:
        raise SourceError(
            f"not pinned in {lock_path.name}: {', '.join(unknown)}",
            path=lock_path,
            fix="name entries as the lock does; `benchsmith source unpin NAME` lists them",
        )
    for entry in chosen:
        data.pop(entry)
    atomic_write_json(lock_path, data)
    return chosen
