"""Get CLEVR v1.0 onto disk: download + verify + extract the official zip, or link a local copy.

Same contract as ``coco_fetch``: the ~18 GB zip is downloaded resumably into ``download_dir``,
checked against the lock file (size + sha256; recorded on the first download), and extracted
with member-name checks. Only what VL-ICL reads is extracted (``scenes/`` and the train/val
images, plus the licence texts), which skips the test images and the questions. A marker file
makes a second run a no-op when the verified zip was already extracted.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from benchsmith.core.atomic import atomic_write_json
from benchsmith.core.errors import SourceError
from benchsmith.core.progress import log
from benchsmith.sources.clevr.reader import CLEVR_DIRNAME, CLEVR_URL, SCENE_SPLITS, scenes_path
from benchsmith.sources.fetching.archive import safe_extract_zip
from benchsmith.sources.fetching.destination import link_folder, marker_matches
from benchsmith.sources.fetching.lockfile import download_locked

MARKER_NAME = ".benchsmith-clevr-extracted.json"
TEXT_FILES = ("LICENSE.txt", "COPYRIGHT.txt", "README.txt")
RERUN = "`benchsmith source fetch clevr`"  # how error fixes tell the user to fetch again
CORRUPT_FIX = f"delete it and rerun {RERUN} to download it again"


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
    zip_path, sha256 = download_locked(
        url, download_dir, Path(lock_path), rerun=RERUN, archive_name=f"{CLEVR_DIRNAME}.zip"
    )
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
    extracted = safe_extract_zip(zip_path, dest_dir, members=wanted, corrupt_fix=CORRUPT_FIX)
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
    link = link_folder(dest, CLEVR_DIRNAME, src)
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


def _already_extracted(dest_dir: Path, marker: dict, splits: tuple[str, ...]) -> bool:
    if not marker_matches(dest_dir / MARKER_NAME, marker):
        return False
    clevr_root = dest_dir / CLEVR_DIRNAME
    return not clevr_root.is_symlink() and all(
        scenes_path(clevr_root, split).is_file() and (clevr_root / "images" / split).is_dir()
        for split in splits
    )
