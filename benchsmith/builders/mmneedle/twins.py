"""``build mmneedle twins``: which COCO images are one picture, found before the plan.

The plan compares COCO ids and captions; COCO also holds the same photo under two ids (byte
for byte, or re-encoded), with captions worded differently. Such a twin makes a false gold: a
"negative" needle whose twin sits in the haystack, or a positive whose picture fills two slots.
This step hashes every image that has a caption (sha256 of the decoded pixels and a 64-bit
perceptual hash), groups twins (:func:`benchsmith.images.twins.find_twin_groups`, threshold
``mmneedle.image_check.near_threshold``) and writes the groups to a JSON report the plan
depends on (a DVC dependency): the canonical plan keeps one image per group, the legacy plan
replays the original and flags the samples twins spoil.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchsmith.builders.mmneedle.image_check import hash_source_images
from benchsmith.core.atomic import atomic_write_json
from benchsmith.core.errors import PlanError
from benchsmith.core.progress import log
from benchsmith.images.twins import TwinGroup, find_twin_groups, set_aside
from benchsmith.sources.coco.reader import CocoCaptions, read_captions


def coco_twin_groups(
    source: CocoCaptions,
    images_dir: str | Path,
    near_threshold: int,
    workers: int = 1,
    executor: str = "local",
) -> tuple[list[TwinGroup], int]:
    """(twin groups, images hashed) over every captioned image of ``source``; also how the
    audit re-derives the groups a build recorded."""
    files = {image.image_id: image.file_name for image in source.images_with_captions}
    hashes = hash_source_images(files, Path(images_dir), workers, executor)
    return find_twin_groups(hashes, near_threshold, workers=workers), len(hashes)


def find_coco_twins(
    captions_path: str | Path,
    images_dir: str | Path,
    near_threshold: int = 4,
    workers: int = 1,
    executor: str = "local",
) -> dict[str, Any]:
    """The twin report of every captioned image of a COCO captions file."""
    source = read_captions(captions_path)
    groups, hashed = coco_twin_groups(source, images_dir, near_threshold, workers, executor)
    exact = sum(group.kind == "exact" for group in groups)
    log(
        f"mmneedle twins: {hashed} captioned images, {len(groups)} twin groups "
        f"({exact} identical pixels, {len(groups) - exact} near); "
        f"{len(set_aside(groups))} images set aside by the canonical plan"
    )
    return {
        "near_threshold": near_threshold,
        "captions": {"path": str(source.path), "sha256": source.sha256},
        "source_images": hashed,
        "twin_groups": len(groups),
        "exact_groups": exact,
        "near_groups": len(groups) - exact,
        "images_set_aside": len(set_aside(groups)),
        "groups": [group.as_dict() for group in groups],
    }


def write_twins(report: dict[str, Any], out_path: str | Path) -> None:
    atomic_write_json(out_path, report)


def twins_metrics(report: dict[str, Any]) -> dict[str, Any]:
    keys = ("source_images", "twin_groups", "exact_groups", "near_groups", "images_set_aside")
    return {key: report[key] for key in keys}


def read_twins(path: str | Path, source: CocoCaptions) -> tuple[list[TwinGroup], dict[str, Any]]:
    """The groups of a twins report made from ``source`` (another captions file: an error)."""
    path = Path(path)
    if not path.is_file():
        raise PlanError(
            "twins report not found", path=path, fix="run `benchsmith build mmneedle twins` first"
        )
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
        groups = [TwinGroup.from_dict(g) for g in report["groups"]]
        made_from = report["captions"]["sha256"]
    except (ValueError, KeyError, TypeError) as exc:
        raise PlanError(
            f"twins report {path} is not a `build mmneedle twins` report ({exc})",
            fix="rerun `benchsmith build mmneedle twins`",
        ) from exc
    if made_from != source.sha256:
        raise PlanError(
            f"twins report {path} was made from another captions file "
            f"(sha256 {made_from[:12]}..., this one {source.sha256[:12]}...)",
            fix="rerun `benchsmith build mmneedle twins` on these captions",
        )
    summary = {
        "path": str(path),
        "near_threshold": report.get("near_threshold"),
        "twin_groups": len(groups),
        "images_set_aside": len(set_aside(groups)),
    }
    return groups, summary
