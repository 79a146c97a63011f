"""Plan an MMNeedle build: pools and samples as small, diffable parquet tables.

The plan needs only the captions file. It is deterministic: the same captions file and
params give byte-identical tables. Layout::

    OUT/pools/n{N}.parquet           one row per stitched image, generation order
    OUT/samples/m{M}_n{N}_k{K}.parquet
    OUT/images.parquet               every COCO image the plan uses, with licence and URLs
    OUT/plan_info.json               params, captions sha256, counts, skips, QA report
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from benchsmith import __version__
from benchsmith.builders.mmneedle.candidates import Candidates
from benchsmith.builders.mmneedle.canonical import canonical_samples
from benchsmith.builders.mmneedle.config import PlanConfig, Setting
from benchsmith.builders.mmneedle.drafts import SampleDraft, in_paper_eval_subset
from benchsmith.builders.mmneedle.legacy import legacy_samples
from benchsmith.builders.mmneedle.pools import build_pool, stitched_id
from benchsmith.builders.mmneedle.prompt import build_prompt, gold_answer
from benchsmith.core.atomic import atomic_directory, atomic_write_json
from benchsmith.core.progress import progress
from benchsmith.sources.coco.reader import CocoCaptions, clean_caption

CELL_STRUCT = pl.Struct(
    {"row": pl.Int64, "col": pl.Int64, "coco_image_id": pl.Int64, "file_name": pl.String}
)
NEEDLE_STRUCT = pl.Struct(
    {
        "caption": pl.String,
        "caption_id": pl.Int64,
        "coco_image_id": pl.Int64,
        "image_index": pl.Int64,
        "row": pl.Int64,
        "col": pl.Int64,
    }
)
POOL_SCHEMA = {"stitched_id": pl.String, "grid": pl.Int64, "cells": pl.List(CELL_STRUCT)}
SAMPLE_SCHEMA = {
    "sample_id": pl.Int64,
    "num_images": pl.Int64,
    "grid": pl.Int64,
    "num_needles": pl.Int64,
    "haystack": pl.List(pl.String),
    "is_positive": pl.Boolean,
    "needles": pl.List(NEEDLE_STRUCT),
    "gold_answer": pl.String,
    "prompt": pl.String,
    "paper_eval_subset": pl.Boolean,
    "haystack_has_duplicate_image": pl.Boolean,
    "ambiguous_needles": pl.Int64,
}


@dataclass
class Plan:
    config: PlanConfig
    candidates: Candidates
    pools: dict[int, np.ndarray]
    samples: dict[str, list[SampleDraft]]
    stats: Counter = field(default_factory=Counter)


def plan_mmneedle(source: CocoCaptions, config: PlanConfig) -> Plan:
    cands = Candidates.from_captions(source, config.order)
    pools = {
        grid: build_pool(config.order, len(cands), grid, config.pool_size, config.seed)
        for grid in sorted(set(config.grids))
    }
    make = legacy_samples if config.order == "legacy" else canonical_samples
    stats: Counter = Counter()
    samples = {
        setting.name: make(
            setting, pools[setting.grid], cands, config.samples_per_config, config.seed, stats
        )
        for setting in progress(config.settings(), desc="planning configs", unit="config")
    }
    return Plan(config, cands, pools, samples, stats)


def pool_rows(plan: Plan, grid: int) -> list[dict[str, Any]]:
    images = plan.candidates.images
    rows = []
    for index, cells in enumerate(plan.pools[grid].tolist()):
        rows.append(
            {
                "stitched_id": stitched_id(grid, index),
                "grid": grid,
                "cells": [
                    {
                        "row": k // grid + 1,
                        "col": k % grid + 1,
                        "coco_image_id": images[c].image_id,
                        "file_name": images[c].file_name,
                    }
                    for k, c in enumerate(cells)
                ],
            }
        )
    return rows


def qa_flags(draft: SampleDraft, pool: np.ndarray) -> tuple[bool, int]:
    """(haystack holds some COCO image twice, number of needles whose image fills >1 slot)."""
    flat = [image for index in draft.haystack for image in pool[index].tolist()]
    counts = Counter(flat)
    ambiguous = sum(1 for n in draft.needles if n.location is not None and counts[n.candidate] > 1)
    return len(counts) < len(flat), ambiguous


def sample_rows(plan: Plan, setting: Setting) -> list[dict[str, Any]]:
    cands = plan.candidates
    pool = plan.pools[setting.grid]
    legacy = plan.config.order == "legacy"
    rows = []
    for draft in plan.samples[setting.name]:
        needles = []
        for needle in draft.needles:
            caption = cands.captions[needle.candidate][needle.caption_index]
            loc = needle.location
            needles.append(
                {
                    "caption": caption.caption if legacy else clean_caption(caption.caption),
                    "caption_id": caption.annotation_id,
                    "coco_image_id": cands.images[needle.candidate].image_id,
                    "image_index": loc[0] if loc else None,
                    "row": loc[1] if loc else None,
                    "col": loc[2] if loc else None,
                }
            )
        duplicate, ambiguous = qa_flags(draft, pool)
        rows.append(
            {
                "sample_id": draft.sample_id,
                "num_images": setting.num_images,
                "grid": setting.grid,
                "num_needles": setting.num_needles,
                "haystack": [stitched_id(setting.grid, index) for index in draft.haystack],
                "is_positive": draft.is_positive,
                "needles": needles,
                "gold_answer": gold_answer([n.location for n in draft.needles]),
                "prompt": build_prompt(
                    setting.num_images, setting.grid, [n["caption"] for n in needles]
                ),
                "paper_eval_subset": in_paper_eval_subset(
                    draft.sample_id, plan.config.samples_per_config, setting.num_needles
                ),
                "haystack_has_duplicate_image": duplicate,
                "ambiguous_needles": ambiguous,
            }
        )
    return rows


def used_image_rows(plan: Plan, source: CocoCaptions) -> list[dict[str, Any]]:
    used: set[int] = set()
    for pool in plan.pools.values():
        used.update(np.unique(pool).tolist())
    for drafts in plan.samples.values():
        used.update(n.candidate for d in drafts for n in d.needles)
    images = sorted((plan.candidates.images[i] for i in used), key=lambda image: image.image_id)
    return [
        {
            "coco_image_id": image.image_id,
            "file_name": image.file_name,
            "license_id": image.license,
            "license": source.license_name(image.license),
            "coco_url": image.coco_url,
            "flickr_url": image.flickr_url,
        }
        for image in images
    ]


def qa_report(rows: list[dict[str, Any]]) -> dict[str, int]:
    positives = [r for r in rows if r["is_positive"]]
    return {
        "samples": len(rows),
        "haystacks_with_duplicate_image": sum(r["haystack_has_duplicate_image"] for r in rows),
        "ambiguous_gold_answers": sum(1 for r in positives if r["ambiguous_needles"] > 0),
        "repeated_needle_slots": sum(
            1
            for r in positives
            if len({(n["image_index"], n["row"], n["col"]) for n in r["needles"]})
            < len(r["needles"])
        ),
    }


def write_plan(
    plan: Plan, source: CocoCaptions, out_dir: str | Path, images_dir: str | Path | None
) -> dict[str, Any]:
    """Write the plan tables atomically (the whole folder appears at once); returns plan_info."""
    report: dict[str, dict[str, int]] = {}
    inputs = [source.path, *([images_dir] if images_dir is not None else [])]
    with atomic_directory(out_dir, inputs=inputs) as staging:
        (staging / "pools").mkdir()
        (staging / "samples").mkdir()
        for grid in plan.pools:
            pl.DataFrame(pool_rows(plan, grid), schema=POOL_SCHEMA).write_parquet(
                staging / "pools" / f"n{grid}.parquet"
            )
        for setting in plan.config.settings():
            rows = sample_rows(plan, setting)
            report[setting.name] = qa_report(rows)
            pl.DataFrame(rows, schema=SAMPLE_SCHEMA).write_parquet(
                staging / "samples" / f"{setting.name}.parquet"
            )
        pl.DataFrame(used_image_rows(plan, source)).write_parquet(staging / "images.parquet")
        info = {
            "family": "mmneedle",
            "benchsmith_version": __version__,
            "plan": plan.config.to_dict(),
            "captions": {"path": str(source.path), "sha256": source.sha256},
            "images_dir": str(images_dir) if images_dir is not None else None,
            "candidates": len(plan.candidates),
            "skipped": dict(sorted(source.skipped.items())),
            "stats": dict(sorted(plan.stats.items())),
            "configs": {name: report[name] for name in sorted(report)},
        }
        atomic_write_json(staging / "plan_info.json", info)
    return info
