"""MMNeedle's published rows as dicts, one at a time: the route ``benchsmith audit`` re-derives
every row by, and the definition of each provenance entry.

Publish builds the same values column by column
(:mod:`~benchsmith.builders.mmneedle.provenance_columns`), with every source entry made by
:func:`image_source` and :func:`caption_source` here; the audit compares the two row by row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchsmith.core.records import decision_record, provenance, source_ref
from benchsmith.sources.coco.reader import (
    ANNOTATIONS_LICENSE,
    ANNOTATIONS_ZIP_URL,
    CAPTIONS_RELPATH,
    IMAGES_DIRNAME,
)

COCO = "coco-2014"


@dataclass(frozen=True)
class RowContext:
    """What a row's provenance needs besides the row: the build's params hash and seed, the
    captions file's sha256 and every source image (licence, URLs, file sha256) by COCO id.
    Publish takes it from the plan and render folders; the audit re-derives it."""

    params_hash: str
    seed: int
    captions_sha256: str
    images: dict[int, dict[str, Any]]


def image_source(image: dict[str, Any]) -> dict[str, str]:
    return source_ref(
        dataset=COCO,
        split="val",
        id=str(image["coco_image_id"]),
        file=f"{IMAGES_DIRNAME}/{image['file_name']}",
        sha256=image["sha256"],
        license=image["license"],
        url=image["flickr_url"] or image["coco_url"],
    )


def caption_source_id(caption_id: int) -> str:
    """A caption's id in ``provenance.sources`` (its COCO annotation id)."""
    return f"caption/{caption_id}"


def caption_source(context: RowContext, caption_id: int) -> dict[str, str]:
    return source_ref(
        dataset=COCO,
        split="val",
        id=caption_source_id(caption_id),
        file=CAPTIONS_RELPATH.as_posix(),
        sha256=context.captions_sha256,
        license=ANNOTATIONS_LICENSE,
        url=ANNOTATIONS_ZIP_URL,
    )


def row_provenance(
    context: RowContext, sources: list[dict[str, str]], decisions: list[dict[str, str]] = ()
) -> dict[str, Any]:
    return provenance(
        family="mmneedle",
        params_hash=context.params_hash,
        seed=context.seed,
        sources=sources,
        decisions=decisions,
    )


def haystack_row(
    context: RowContext, stitched_id: str, grid: int, cells: list[dict], image: Any, digest: str
) -> dict[str, Any]:
    """A ``haystacks_n{N}`` row; ``image`` is the JPEG bytes (or, in an audit, their Digest)."""
    return {
        "stitched_id": stitched_id,
        "grid": grid,
        "image": {"bytes": image, "path": f"{stitched_id}.jpg"},
        "cells": cells,
        "sha256": digest,
        "provenance": row_provenance(
            context, [image_source(context.images[c["coco_image_id"]]) for c in cells]
        ),
    }


def sample_decisions(row: dict[str, Any]) -> list[dict[str, str]]:
    """QA findings recorded on the row (legacy order keeps the original's flaws, flagged)."""
    absent = sum(1 for n in row["needles"] if n["image_index"] is None)
    return flag_decisions(row, absent)


# the sample columns :func:`flag_decisions` reads
FLAG_COLUMNS = (
    "haystack_has_duplicate_image",
    "needles_with_twin_in_haystack",
    "ambiguous_needles",
    "is_positive",
    "num_images",
    "grid",
)


def flag_decisions(row: dict[str, Any], absent: int) -> list[dict[str, str]]:
    """The decisions of a sample with these :data:`FLAG_COLUMNS` and ``absent`` needles that
    have no slot in the haystack."""
    decisions = []
    if row["haystack_has_duplicate_image"]:
        decisions.append(decision_record("plan", "flag", "DUPLICATE_IMAGE_IN_HAYSTACK"))
    if row["needles_with_twin_in_haystack"]:
        evidence = {"needles": row["needles_with_twin_in_haystack"]}
        decisions.append(decision_record("plan", "flag", "NEEDLE_TWIN_IN_HAYSTACK", evidence))
    if row["ambiguous_needles"]:
        evidence = {"needles_in_several_slots": row["ambiguous_needles"]}
        decisions.append(decision_record("plan", "flag", "AMBIGUOUS_GOLD_ANSWER", evidence))
    if row["is_positive"] and absent:
        evidence = {"absent_needles": absent, "slots": row["num_images"] * row["grid"] ** 2}
        decisions.append(decision_record("plan", "change", "MORE_NEEDLES_THAN_SLOTS", evidence))
    return decisions


def sample_row(context: RowContext, row: dict[str, Any]) -> dict[str, Any]:
    """A plan's sample row with its provenance (the captions and images of its needles)."""
    sources = []
    for needle in row["needles"]:
        sources.append(caption_source(context, needle["caption_id"]))
        sources.append(image_source(context.images[needle["coco_image_id"]]))
    return {**row, "provenance": row_provenance(context, sources, sample_decisions(row))}
