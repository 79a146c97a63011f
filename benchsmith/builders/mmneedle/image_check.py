"""Duplicate-image check of an MMNeedle plan: is any picture shown twice inside one haystack?

The plan's own check compares COCO image *ids*; this stage compares *pixels*. COCO holds some
pictures under two ids, and a near duplicate (same scene re-encoded or resized) is as
confusing to a model searching for a needle as the same id twice. Every source image the plan
uses is hashed once (sha256 of decoded pixels, 64-bit perceptual hash); then each stitched
image (its N x N cells) and each sample's whole haystack (M stitched images) is checked.
The JSON report is a DVC output that ``mmneedle publish`` puts into the card.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

from benchsmith.core.atomic import atomic_write_json
from benchsmith.core.errors import SourceError
from benchsmith.core.progress import log
from benchsmith.images.duplicates import duplicates_within_samples
from benchsmith.images.hashes import hash_images

MAX_EXAMPLES = 5


def _source_files(plan_dir: Path) -> dict[int, str]:
    """COCO id -> file name of every source image the plan uses."""
    images = pl.read_parquet(plan_dir / "images.parquet", columns=["coco_image_id", "file_name"])
    return {int(image_id): file_name for image_id, file_name in images.iter_rows()}


def read_source_images(files: dict[int, str], images_dir: Path) -> Iterator[tuple[int, bytes]]:
    """(COCO id, bytes), one file at a time: the full build reads 40k images, GBs in total."""
    for image_id, file_name in files.items():
        path = images_dir / file_name
        if not path.is_file():
            raise SourceError(
                f"image {file_name} used by the plan is missing",
                path=path,
                fix="rerun the coco source stage or pass --images",
            )
        yield int(image_id), path.read_bytes()


def hash_source_images(
    files: dict[int, str], images_dir: Path, workers: int, executor: str
) -> dict[int, Any]:
    """Fingerprints of COCO images by id (:func:`benchsmith.images.hashes.hash_images`); an
    image that does not decode is an error naming its file (a source must be whole)."""
    hashes, errors = hash_images(
        read_source_images(files, images_dir), workers=workers, total=len(files),
        executor=executor,
    )  # fmt: skip
    if errors:
        first = next(iter(sorted(errors.items())))
        raise SourceError(
            f"{len(errors)} source image(s) cannot be decoded, e.g. id {first[0]}: {first[1]}",
            path=images_dir / files[first[0]],
            fix="re-download the images (the lock file names their sha256)",
        )
    return hashes


def _summarise(findings: list[Any], total: int, image_ids: dict[str, list[int]]) -> dict[str, Any]:
    """Counts plus a few examples naming the two COCO image ids that look alike."""
    exact = {f.sample_id for f in findings if f.kind == "exact"}
    near = {f.sample_id for f in findings if f.kind == "near"} - exact
    examples = [
        {
            "id": f.sample_id,
            "kind": f.kind,
            "coco_image_ids": [image_ids[f.sample_id][f.a], image_ids[f.sample_id][f.b]],
            "positions": [f.a, f.b],
            "distance": f.distance,
        }
        for f in findings[:MAX_EXAMPLES]
    ]
    return {
        "total": total,
        "with_exact_duplicate": len(exact),
        "with_near_duplicate_only": len(near),
        "examples": examples,
    }


def check_mmneedle_images(
    plan_dir: str | Path,
    images_dir: str | Path,
    near_threshold: int = 4,
    workers: int = 1,
    executor: str = "local",
) -> dict[str, Any]:
    plan_dir, images_dir = Path(plan_dir), Path(images_dir)
    hashes = hash_source_images(_source_files(plan_dir), images_dir, workers, executor)
    by_pixels: dict[str, list[int]] = defaultdict(list)
    for image_id, value in hashes.items():
        by_pixels[value.pixel_sha256].append(image_id)
    same_pixels = sorted(sorted(ids) for ids in by_pixels.values() if len(ids) > 1)

    cells: dict[str, list[int]] = {}
    stitched_report = {}
    for pool in sorted((plan_dir / "pools").glob("n*.parquet")):
        frame = pl.read_parquet(pool, columns=["stitched_id", "cells"])
        ids = {sid: [c["coco_image_id"] for c in row_cells] for sid, row_cells in frame.iter_rows()}
        cells.update(ids)
        findings = duplicates_within_samples(
            {sid: [hashes[i] for i in image_ids] for sid, image_ids in ids.items()},
            near_threshold,
        )
        stitched_report[pool.stem] = _summarise(findings, len(ids), ids)

    config_report = {}
    for path in sorted((plan_dir / "samples").glob("*.parquet")):
        frame = pl.read_parquet(path, columns=["sample_id", "haystack"])
        image_ids = {
            str(sample_id): [i for sid in haystack for i in cells[sid]]
            for sample_id, haystack in frame.iter_rows()
        }
        haystacks = {key: [hashes[i] for i in ids] for key, ids in image_ids.items()}
        findings = duplicates_within_samples(haystacks, near_threshold)
        config_report[path.stem] = _summarise(findings, len(haystacks), image_ids)

    kinds = Counter()
    for block in config_report.values():
        kinds["exact"] += block["with_exact_duplicate"]
        kinds["near"] += block["with_near_duplicate_only"]
    log(
        f"mmneedle image check: {len(hashes)} source images, {len(same_pixels)} groups of "
        f"identical pixels; haystacks with an exact duplicate {kinds['exact']}, near only {kinds['near']}"
    )
    return {
        "near_threshold": near_threshold,
        "source_images": len(hashes),
        "identical_pixel_groups": same_pixels[:50],
        "identical_pixel_group_count": len(same_pixels),
        "stitched": stitched_report,
        "configs": config_report,
    }


def write_image_check(report: dict[str, Any], out_path: str | Path) -> None:
    atomic_write_json(out_path, report)


COUNTED = ("total", "with_exact_duplicate", "with_near_duplicate_only")


def image_check_metrics(report: dict[str, Any]) -> dict[str, Any]:
    """The report's headline counts for ``dvc metrics``: haystacks (over every sample config)
    and stitched images holding an exact, or only a near, duplicate picture. Per-config counts
    and examples stay in the report and the card."""

    def summed(blocks: dict[str, Any]) -> dict[str, int]:
        return {key: sum(block[key] for block in blocks.values()) for key in COUNTED}

    return {
        "source_images": report["source_images"],
        "identical_pixel_groups": report["identical_pixel_group_count"],
        "haystacks": summed(report["configs"]),
        "stitched_images": summed(report["stitched"]),
    }
