"""Get the real COCO 2014 val onto disk: download + verify + extract, or link a local copy.

``fetch_coco`` is safe to rerun: finished downloads are verified against the lock file instead
of fetched again, an interrupted one resumes, and extraction is skipped when the marker file
says ``out_dir`` already holds exactly what the two verified zips contain.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from benchsmith.core.atomic import atomic_write_json
from benchsmith.core.errors import SourceError
from benchsmith.core.progress import log
from benchsmith.sources.coco.reader import (
    ANNOTATIONS_ZIP_URL,
    CAPTIONS_RELPATH,
    IMAGES_DIRNAME,
    IMAGES_ZIP_URL,
)
from benchsmith.sources.fetching.archive import safe_extract_zip
from benchsmith.sources.fetching.destination import marker_matches, replace_symlink
from benchsmith.sources.fetching.lockfile import DEFAULT_LOCK_PATH, download_locked

MARKER_NAME = ".benchsmith-extracted.json"
LINKED_NAMES = (CAPTIONS_RELPATH.parts[0], IMAGES_DIRNAME)  # "annotations", "val2014"
RERUN = "`benchsmith source fetch coco`"  # how error fixes tell the user to fetch again
CORRUPT_FIX = f"delete it and rerun {RERUN} to download it again"


def fetch_coco(
    out_dir: Path,
    *,
    download_dir: Path,
    annotations_url: str = ANNOTATIONS_ZIP_URL,
    images_url: str = IMAGES_ZIP_URL,
    lock_path: Path = DEFAULT_LOCK_PATH,
) -> Path:
    """Download both COCO zips into ``download_dir`` and extract captions + val2014 images.

    Only ``annotations/captions_val2014.json`` and ``val2014/*`` are extracted. Returns
    ``out_dir`` (``out_dir/annotations/captions_val2014.json``, ``out_dir/val2014/``).
    """
    out_dir, download_dir = Path(out_dir), Path(download_dir)
    annotations_zip, annotations_sha = download_locked(
        annotations_url, download_dir, lock_path, rerun=RERUN
    )
    images_zip, images_sha = download_locked(images_url, download_dir, lock_path, rerun=RERUN)
    marker = {
        "annotations": {"file": annotations_zip.name, "sha256": annotations_sha},
        "images": {"file": images_zip.name, "sha256": images_sha},
    }
    if _already_extracted(out_dir, marker):
        log(f"COCO 2014 val already extracted in {out_dir}")
        return out_dir
    _drop_links(out_dir)
    (out_dir / MARKER_NAME).unlink(missing_ok=True)  # incomplete until re-marked below

    captions = CAPTIONS_RELPATH.as_posix()
    if not safe_extract_zip(
        annotations_zip, out_dir, members=lambda name: name == captions, corrupt_fix=CORRUPT_FIX
    ):
        raise SourceError(
            f"{annotations_zip.name} does not contain {captions}",
            path=annotations_zip,
            fix="check --annotations-url points at annotations_trainval2014.zip",
        )
    images = safe_extract_zip(
        images_zip,
        out_dir,
        members=lambda name: PurePosixPath(name).parts[0] == IMAGES_DIRNAME,
        corrupt_fix=CORRUPT_FIX,
    )
    if not images:
        raise SourceError(
            f"{images_zip.name} contains no {IMAGES_DIRNAME}/ files",
            path=images_zip,
            fix="check --images-url points at val2014.zip",
        )
    atomic_write_json(out_dir / MARKER_NAME, {**marker, "image_files": len(images)})
    log(f"extracted {captions} and {len(images)} {IMAGES_DIRNAME}/ files into {out_dir}")
    return out_dir


def link_local_coco(local_dir: Path, out_dir: Path) -> Path:
    """Make ``out_dir/annotations`` and ``out_dir/val2014`` symlinks into an existing COCO copy."""
    local_dir = Path(local_dir).expanduser().resolve()
    out_dir = Path(out_dir)
    fix = (
        "point sources.coco.full.local_dir at the folder holding annotations/captions_val2014.json "
        "and val2014/, or unset it to download COCO instead"
    )
    if not local_dir.is_dir():
        raise SourceError("local COCO folder not found", path=local_dir, fix=fix)
    missing = []
    if not (local_dir / CAPTIONS_RELPATH).is_file():
        missing.append(CAPTIONS_RELPATH.as_posix())
    if not (local_dir / IMAGES_DIRNAME).is_dir():
        missing.append(f"{IMAGES_DIRNAME}/")
    if missing:
        raise SourceError(
            f"not a COCO 2014 val folder: missing {' and '.join(missing)}", path=local_dir, fix=fix
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    for name in LINKED_NAMES:
        replace_symlink(
            out_dir / name, local_dir / name, fix="remove it or choose another --out folder"
        )
    (out_dir / MARKER_NAME).unlink(missing_ok=True)  # out_dir no longer holds an extraction
    return out_dir


def _already_extracted(out_dir: Path, marker: dict) -> bool:
    if not marker_matches(out_dir / MARKER_NAME, marker):
        return False
    return (out_dir / CAPTIONS_RELPATH).is_file() and (out_dir / IMAGES_DIRNAME).is_dir()


def _drop_links(out_dir: Path) -> None:
    """Remove links made by ``link_local_coco`` so extraction never writes into a local copy."""
    for name in LINKED_NAMES:
        link = out_dir / name
        if link.is_symlink():
            log(f"removing link {link} -> {os.readlink(link)} to extract downloaded COCO instead")
            link.unlink()
