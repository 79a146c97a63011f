"""Fetch selected ScanNet v2 scenes from the server named in the user's own access approval.

ScanNet is licence-gated: its terms are accepted per person, and the approval e-mail names the
download server. So there is no default URL: ``--base-url`` is the root the approval gives
(the one its ``download-scannet.py`` uses), and only the scenes the user selects are fetched.
The server's layout (ScanNet v2 release) is:

- ``BASE/v2/scans/sceneXXXX_YY/sceneXXXX_YY<suffix>`` for each scene file;
- ``BASE/v2/tasks/scannetv2-labels.combined.tsv`` for the label map.

Each file is downloaded like the other sources' archives (resumable ``.part`` with If-Range,
retries, progress bar) straight into ``OUT/ScanNet/`` in the layout ``link`` expects, and pinned
in a lock file (keyed by the release path, never the private URL) by size and sha256 once it
proves readable (a ``.sens`` indexes, JSON parses, a
PLY parses, the scene info has its keys), so a later fetch verifies every file against the
first and a silently changed or corrupt upstream file is caught. ScanNet publishes no checksums
of its own. The split lists (``Tasks/Benchmark``) are not on the server; they ship with ScanNet's
code repository and are not needed to build.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from benchsmith.core.errors import SourceError
from benchsmith.core.progress import log
from benchsmith.sources.scannet.scene import (
    AGGREGATION_SUFFIX,
    LABELS_FILE,
    MESH_SUFFIX,
    SEGS_SUFFIX,
    read_label_map,
)

SCENE_FILES = (".sens", ".txt", MESH_SUFFIX, SEGS_SUFFIX, AGGREGATION_SUFFIX)
SCENE_ID = re.compile(r"scene\d{4}_\d{2}")
DEFAULT_LOCK = Path("scannet.lock.json")
RERUN = "`benchsmith source fetch scannet`"


def scene_ids(value: str | list[str] | None) -> list[str]:
    """Scene ids from a comma-separated string or a list; each must look like sceneXXXX_YY."""
    items = value.split(",") if isinstance(value, str) else list(value or [])
    ids = [item.strip() for item in items if item and item.strip()]
    bad = [item for item in ids if not SCENE_ID.fullmatch(item)]
    if not ids or bad:
        raise SourceError(
            f"scene ids must look like scene0000_00, got {bad or 'none'}",
            fix="pass --scenes scene0000_00,scene0011_00 (sources.scannet.full.scenes)",
        )
    return list(dict.fromkeys(ids))


def check_downloaded(path: Path) -> None:
    """A first download is pinned only once it reads as its kind of ScanNet file."""
    from plyfile import PlyParseError

    name = path.name
    try:
        if name.endswith(".sens"):
            from benchsmith.sources.scannet.sens import SensReader

            SensReader(path).close()
        elif name.endswith(".json"):
            json.loads(path.read_text(encoding="utf-8"))
        elif name.endswith(".ply"):
            from plyfile import PlyData

            PlyData.read(str(path))["vertex"]
        elif name.endswith(".tsv"):
            read_label_map(path)
        elif name.endswith(".txt") and "colorWidth" not in path.read_text(encoding="utf-8"):
            raise ValueError("no colorWidth line: not a ScanNet scene info file")
    except (SourceError, PlyParseError, ValueError, KeyError, UnicodeDecodeError, EOFError) as exc:
        refused = path.with_name(name + ".refused")
        os.replace(path, refused)
        reason = str(exc).splitlines()[0]
        raise SourceError(
            f"{name} was refused and not recorded in the lock: {reason}",
            path=refused,
            fix=f"check --base-url (the server in your ScanNet approval) and rerun {RERUN}",
        ) from exc


def fetch_one(base: str, relative: str, dest: Path, lock_path: Path) -> str:
    """Download (or verify) ``BASE/relative`` against the lock; pin it on first download.

    The lock is keyed by the release-relative path, not the URL: the server is the one in the
    user's approval (not for a committed file to spread), and a mirror must serve the same
    bytes."""
    from benchsmith.sources.fetching.download import ChecksumMismatch, download_file
    from benchsmith.sources.fetching.lockfile import expected_for, read_lock, record

    url = f"{base}/{relative}"
    size, sha256 = expected_for(read_lock(lock_path), relative)
    try:
        download_file(url, dest, expected_sha256=sha256, expected_size=size, desc=dest.name)
    except ChecksumMismatch as exc:
        raise SourceError(
            f"{dest.name} does not match the checksum recorded in {lock_path} for {relative}",
            path=exc.path,
            fix=f"delete {exc.path} and rerun {RERUN}; if ScanNet really changed the file, "
            f"remove its entry from {lock_path} to accept it",
        ) from exc
    if sha256 is None:
        check_downloaded(dest)
        sha256 = record(lock_path, relative, dest)["sha256"]
    return sha256


def fetch_scannet(
    out: str | Path, *, base_url: str | None, scenes: str | list[str] | None, lock: Path
) -> Path:
    """``OUT/ScanNet`` with the selected scenes and the label map; returns it."""
    from benchsmith.sources.scannet.source import SCANNET_DIRNAME

    if not base_url:
        raise SourceError(
            "ScanNet has no public download URL: pass the server named in your ScanNet access "
            "approval",
            fix="pass --base-url URL (sources.scannet.full.base_url), or link your own copy "
            "with `benchsmith source link scannet`",
        )
    ids = scene_ids(scenes)
    base = base_url.rstrip("/")
    root = Path(out) / SCANNET_DIRNAME
    lock_path = Path(lock)
    fetch_one(base, f"v2/tasks/{LABELS_FILE}", root / LABELS_FILE, lock_path)
    for scene in ids:
        for suffix in SCENE_FILES:
            name = f"{scene}{suffix}"
            fetch_one(base, f"v2/scans/{scene}/{name}", root / "scans" / scene / name, lock_path)
    log(f"scannet fetch: {len(ids)} scene(s) x {len(SCENE_FILES)} files verified in {root}")
    return root
