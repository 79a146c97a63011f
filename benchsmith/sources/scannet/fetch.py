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


METADATA_MAX_BYTES = 256 * 1024**2  # a scene's JSON, .txt or the label map; real ones are < 50 MB
JSON_KEYS = {AGGREGATION_SUFFIX: "segGroups", SEGS_SUFFIX: "segIndices"}  # each must be a list


def check_downloaded(path: Path, max_metadata_bytes: int = METADATA_MAX_BYTES) -> None:
    """A first download is pinned only once it reads as its kind of ScanNet file: a ``.sens``
    indexes, a PLY parses, a JSON parses *and* holds the list ScanNet's has (a login page's
    ``{"error": ...}`` parses too), the label map has its columns and rows, the scene info its
    ``colorWidth``; a metadata file larger than any real one is refused before it is parsed."""
    from plyfile import PlyParseError

    name = path.name
    try:
        if name.endswith((".json", ".tsv", ".txt")) and path.stat().st_size > max_metadata_bytes:
            raise ValueError(f"{path.stat().st_size:,} bytes: larger than any real ScanNet "
                             f"{name.rsplit('.', 1)[1]} file (at most {max_metadata_bytes:,})")  # fmt: skip
        if name.endswith(".sens"):
            from benchsmith.sources.scannet.sens import SensReader

            SensReader(path).close()
        elif name.endswith(".json"):
            data = json.loads(path.read_text(encoding="utf-8"))
            key = next((k for suffix, k in JSON_KEYS.items() if name.endswith(suffix)), None)
            if key and not (isinstance(data, dict) and isinstance(data.get(key), list)):
                shown = sorted(data)[:3] if isinstance(data, dict) else type(data).__name__
                raise ValueError(f"no {key!r} list (it holds {shown}): not a ScanNet {name}")
        elif name.endswith(".ply"):
            from plyfile import PlyData

            PlyData.read(str(path))["vertex"]
        elif name.endswith(".tsv") and not read_label_map(path):
            raise ValueError("no label rows under its header")
        elif name.endswith(".txt") and "colorWidth" not in path.read_text(encoding="utf-8"):
            raise ValueError("no colorWidth line: not a ScanNet scene info file")
    except (SourceError, PlyParseError, ValueError, KeyError, UnicodeDecodeError, EOFError,
            OSError) as exc:  # fmt: skip
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
            f"accept it by clearing its pin: `benchsmith source unpin scannet {relative} "
            f"--lock {lock_path}`",
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
            fix="give --base-url (that server's URL), or link your own copy with "
            "`benchsmith source link scannet`",
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
