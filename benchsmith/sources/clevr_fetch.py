"""Get CLEVR v1.0 onto disk: download + verify + extract the official zip, or link a local copy.

Same contract as ``coco_fetch``: the ~18 GB zip is downloaded resumably into ``download_dir``,
checked against the lock file (size + sha256; recorded on the first download), and extracted
with member-name checks. Only what VL-ICL reads is extracted (``scenes/`` and the train/val
images, plus the licence texts), which skips the test images and the questions. A marker file
makes a second run a no-op when the verified zip was already extracted.
"""

from __future__ import annotations

import json
import os
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from benchsmith.core.atomic import atomic_write_json
from benchsmith.core.errors import SourceError
from benchsmith.core.progress import log
from benchsmith.sources.archive import safe_extract_zip
from benchsmith.sources.clevr import CLEVR_DIRNAME, CLEVR_URL, SCENE_SPLITS, scenes_path
from benchsmith.sources.download import ChecksumMismatch, download_file
from benchsmith.sources.lockfile import expected_for, read_lock, record

MARKER_NAME = ".benchsmith-clevr-extracted.json"
TEXT_FILES = ("LICENSE.txt", "COPYRIGHT.txt", "README.txt")


def fetch_clevr(
    dest_dir: str | Path,
    *,
    url: str = CLEVR_URL,
    lock_path: Path,
    download_dir: str | Path | None = None,
    splits: tuple[str, ...] = SCENE_SPLITS,
) -> Path:
    """Download ``url`` (default the official zip) and extract it; returns ``dest_dir/CLEVR_v1.0``.

    ``download_dir`` defaults to ``dest_dir/downloads``. Rerunning verifies the zip against the
    lock and skips extraction when the marker matches.
    """
    dest_dir = Path(dest_dir)
    download_dir = Path(download_dir) if download_dir is not None else dest_dir / "downloads"
    zip_path, sha256 = _download_locked(url, download_dir, Path(lock_path))
    marker = {"file": zip_path.name, "sha256": sha256, "splits": sorted(splits)}
    clevr_root = dest_dir / CLEVR_DIRNAME
    if _already_extracted(dest_dir, marker, splits):
        log(f"CLEVR v1.0 already extracted in {clevr_root}")
        return clevr_root
    if clevr_root.is_symlink():  # made by link_local_clevr: never extract into a local copy
        log(f"removing link {clevr_root} -> {os.readlink(clevr_root)} to extract the download")
        clevr_root.unlink()
    (dest_dir / MARKER_NAME).unlink(missing_ok=True)  # incomplete until re-marked below
    wanted = _member_filter(splits)
    extracted = safe_extract_zip(zip_path, dest_dir, members=wanted)
    missing = [split for split in splits if not scenes_path(clevr_root, split).is_file()]
    if missing:
        raise SourceError(
            f"{zip_path.name} has no {CLEVR_DIRNAME}/scenes/CLEVR_{missing[0]}_scenes.json",
            path=zip_path,
            fix=f"check that the URL points at the official CLEVR_v1.0.zip ({CLEVR_URL})",
        )
    atomic_write_json(dest_dir / MARKER_NAME, {**marker, "files": len(extracted)})
    log(f"extracted {len(extracted)} CLEVR files into {clevr_root}")
    return clevr_root


def link_local_clevr(src: str | Path, dest: str | Path) -> Path:
    """Make ``dest/CLEVR_v1.0`` a symlink to an existing copy; returns ``dest/CLEVR_v1.0``.

    ``src`` is the ``CLEVR_v1.0`` folder itself or a folder containing it.
    """
    src = Path(src).expanduser().resolve()
    if not (src / "scenes").is_dir() and (src / CLEVR_DIRNAME).is_dir():
        src = src / CLEVR_DIRNAME
    fix = "point at the CLEVR_v1.0 folder holding scenes/ and images/, or fetch CLEVR instead"
    if not src.is_dir():
        raise SourceError("local CLEVR folder not found", path=src, fix=fix)
    missing = [name for name in ("scenes", "images") if not (src / name).is_dir()]
    if missing:
        raise SourceError(
            f"not a CLEVR v1.0 folder: missing {' and '.join(m + '/' for m in missing)}",
            path=src,
            fix=fix,
        )
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    link = dest / CLEVR_DIRNAME
    if link.exists() and not link.is_symlink():
        raise SourceError(
            f"{link} exists and is not a symlink; refusing to replace it",
            path=link,
            fix="remove it or choose another destination folder",
        )
    tmp = dest / f".{CLEVR_DIRNAME}.tmp-link-{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(src, target_is_directory=True)
    os.replace(tmp, link)  # atomically replaces an existing link
    (dest / MARKER_NAME).unlink(missing_ok=True)  # dest no longer holds an extraction
    return link


def _member_filter(splits: tuple[str, ...]):
    """Keep ``CLEVR_v1.0/scenes/*``, ``CLEVR_v1.0/images/<split>/*`` and the licence texts."""
    keep_images = {("images", split) for split in splits}

    def wanted(name: str) -> bool:
        parts = PurePosixPath(name).parts
        if len(parts) < 2 or parts[0] != CLEVR_DIRNAME:
            return False
        if parts[1] == "scenes" or (len(parts) == 2 and parts[1] in TEXT_FILES):
            return True
        return len(parts) >= 4 and (parts[1], parts[2]) in keep_images

    return wanted


def _download_locked(url: str, download_dir: Path, lock_path: Path) -> tuple[Path, str]:
    """Download ``url`` verified against the lock; record it there on first download."""
    name = PurePosixPath(urlsplit(url).path).name
    if not name:
        raise SourceError(
            f"cannot name the download: {url} has no file name",
            fix="pass a URL that ends in the archive's file name (CLEVR_v1.0.zip)",
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
                f"delete {exc.path} and rerun the CLEVR fetch; if the file really changed "
                f"upstream, remove its entry from {lock_path} to accept the new version"
            ),
        ) from exc
    if sha256 is None:
        sha256 = record(lock_path, url, path)["sha256"]
        log(f"recorded {name} ({path.stat().st_size} bytes) in {lock_path}")
    return path, sha256


def _already_extracted(dest_dir: Path, marker: dict, splits: tuple[str, ...]) -> bool:
    try:
        recorded = json.loads((dest_dir / MARKER_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(recorded, dict) or any(recorded.get(k) != v for k, v in marker.items()):
        return False
    clevr_root = dest_dir / CLEVR_DIRNAME
    return not clevr_root.is_symlink() and all(
        scenes_path(clevr_root, split).is_file() and (clevr_root / "images" / split).is_dir()
        for split in splits
    )
