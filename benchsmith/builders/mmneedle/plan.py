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
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from benchsmith import __version__
from benchsmith.builders.mmneedle.candidates import Candidates
from benchsmith.builders.mmneedle.canonical import canonical_samples
from benchsmith.builders.mmneedle.config import PlanConfig, Setting
from benchsmith.builders.mmneedle.drafts import ABSENT, PlannedSamples, in_paper_eval_subset
from benchsmith.builders.mmneedle.legacy import legacy_samples
from benchsmith.builders.mmneedle.pools import build_pool, stitched_id
from benchsmith.builders.mmneedle.prompt import gold_answer_column, prompt_column
from benchsmith.core.atomic import atomic_directory, atomic_write_json
from benchsmith.core.progress import progress
from benchsmith.core.workers import usable_cores
from benchsmith.images.twins import TwinGroup, picture_of, set_aside
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
    "needles_with_twin_in_haystack": pl.Int64,
}


@dataclass
class Plan:
    config: PlanConfig
    candidates: Candidates
    pools: dict[int, np.ndarray]
    samples: dict[str, PlannedSamples]
    stats: Counter = field(default_factory=Counter)
    # candidate index -> index of the candidate its picture is kept as (twins share one)
    pictures: np.ndarray | None = None
    twins: dict[str, Any] | None = None  # the twins report's summary, None without one

    def picture_index(self) -> np.ndarray:
        return np.arange(len(self.candidates)) if self.pictures is None else self.pictures

    @cached_property
    def caption_texts(self) -> pl.Series:
        """Every candidate caption in the flat caption order, as shown to a model: as in the
        file in legacy order (the original's text), whitespace-collapsed in canonical order."""
        raw = (c.caption for caps in self.candidates.captions for c in caps)
        if self.config.order == "legacy":
            return pl.Series(list(raw), dtype=pl.String)
        return pl.Series([clean_caption(text) for text in raw], dtype=pl.String)


def plan_mmneedle(
    source: CocoCaptions,
    config: PlanConfig,
    workers: int | None = None,
    twins: tuple[list[TwinGroup], dict[str, Any]] | None = None,
) -> Plan:
    """Pools, then every config's samples; canonical configs run on ``workers`` threads.

    ``twins`` (groups and summary from :func:`..twins.read_twins`): the canonical order keeps
    one image of each twin group, so a picture is one candidate and every rule about images
    (disjoint haystacks, negatives absent from the haystack, unique positive slots) holds for
    pictures; the legacy order replays the original over every image, and the QA columns flag
    the samples twins spoil.

    The canonical sampler is compiled and releases the GIL, so configs plan side by side on
    threads with nothing copied; each config draws from its own generators and keeps its own
    counters, so the result does not depend on ``workers``. The legacy sampler is pure Python
    (one ``random`` stream per config) and runs on one thread.
    """
    groups, summary = twins if twins is not None else ([], None)
    aside = set_aside(groups) if config.order == "canonical" else set()
    cands = Candidates.from_captions(source, config.order, aside)
    position = {int(image_id): k for k, image_id in enumerate(cands.image_ids.tolist())}
    pictures = np.arange(len(cands))
    for image_id, kept in picture_of(groups).items():
        if image_id in position and kept in position:
            pictures[position[image_id]] = position[kept]
    pools = {
        grid: build_pool(config.order, len(cands), grid, config.pool_size, config.seed)
        for grid in sorted(set(config.grids))
    }
    make = legacy_samples if config.order == "legacy" else canonical_samples
    workers = 1 if config.order == "legacy" else usable_cores() if workers is None else workers

    def plan_config(setting: Setting) -> tuple[PlannedSamples, Counter]:
        counts: Counter = Counter()
        drafted = make(
            setting, pools[setting.grid], cands, config.samples_per_config, config.seed, counts
        )
        return drafted, counts

    settings = config.settings()
    stats: Counter = Counter()
    samples = {}
    with ThreadPoolExecutor(max(1, workers)) as threads:
        planned = threads.map(plan_config, settings)
        for setting, (drafted, counts) in progress(
            zip(settings, planned, strict=True),
            total=len(settings),
            desc="planning configs",
            unit="config",
        ):
            samples[setting.name] = drafted
            stats.update(counts)
    if aside:
        stats["twin_images_set_aside"] = len(aside)
    return Plan(config, cands, pools, samples, stats, pictures, summary)


def _lists(flat: pl.Series, width: int, dtype: pl.DataType) -> pl.Series:
    """Consecutive runs of ``width`` values of ``flat`` as one list per row."""
    return flat.reshape((len(flat) // width, width)).cast(pl.List(dtype))


def _stitched_ids(grid: int, indices: np.ndarray) -> pl.Series:
    names = pl.Series(
        [stitched_id(grid, index) for index in range(int(indices.max(initial=-1)) + 1)]
    )
    return names.gather(indices.ravel())


def pool_frame(plan: Plan, grid: int) -> pl.DataFrame:
    """One row per stitched image: its id, grid, and cells (row-major) with their COCO image."""
    pool = plan.pools[grid]
    cells = grid * grid
    flat = pool.ravel()
    position = np.tile(np.arange(cells), len(pool))
    cell = pl.DataFrame(
        {
            "row": position // grid + 1,
            "col": position % grid + 1,
            "coco_image_id": plan.candidates.image_ids[flat],
            "file_name": pl.Series([image.file_name for image in plan.candidates.images]).gather(
                flat
            ),
        }
    ).to_struct("cells")
    return pl.DataFrame(
        {
            "stitched_id": _stitched_ids(grid, np.arange(len(pool))),
            "grid": np.full(len(pool), grid, dtype=np.int64),
            "cells": _lists(cell, cells, CELL_STRUCT),
        }
    )


def pool_rows(plan: Plan, grid: int) -> list[dict[str, Any]]:
    return pool_frame(plan, grid).to_dicts()


def qa_flags(
    samples: PlannedSamples, pool: np.ndarray, pictures: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per sample: (haystack shows some picture twice: one COCO image or two twins; number of
    needles whose image fills more than one slot; number of needles whose *twin*, another
    COCO id with the same picture, fills a slot: a negative's gold is then false, a
    positive's not unique)."""
    flat = pool[samples.haystack].reshape(len(samples), -1)
    shown = pictures[flat]
    ordered = np.sort(shown, axis=1)
    duplicate = (ordered[:, 1:] == ordered[:, :-1]).any(axis=1)
    fills = (flat[:, None, :] == samples.candidate[:, :, None]).sum(axis=2)
    ambiguous = ((samples.slot != ABSENT) & (fills > 1)).sum(axis=1)
    twin = (shown[:, None, :] == pictures[samples.candidate][:, :, None]) & (
        flat[:, None, :] != samples.candidate[:, :, None]
    )
    return duplicate, ambiguous.astype(np.int64), twin.any(axis=2).sum(axis=1).astype(np.int64)


def _needle_locations(slot: np.ndarray, grid: int) -> pl.DataFrame:
    """1-based image_index, row, col of each needle's flat slot; null for an absent needle."""
    cells = grid * grid
    present = pl.col("slot") != ABSENT
    return pl.DataFrame({"slot": slot}).select(
        pl.when(present).then(pl.col("slot") // cells + 1).alias("image_index"),
        pl.when(present).then(pl.col("slot") % cells // grid + 1).alias("row"),
        pl.when(present).then(pl.col("slot") % grid + 1).alias("col"),
    )


def sample_frame(plan: Plan, setting: Setting) -> pl.DataFrame:
    """One row per sample of ``setting``, with its needles, gold answer, prompt and QA flags."""
    cands = plan.candidates
    samples = plan.samples[setting.name]
    n, k = samples.candidate.shape
    flat = cands.flat_caption_index(samples.candidate.ravel(), samples.caption.ravel())
    texts = plan.caption_texts.gather(flat)
    locations = _needle_locations(samples.slot.ravel(), setting.grid)
    needle = pl.DataFrame(
        {
            "caption": texts,
            "caption_id": cands.caption_ids[flat],
            "coco_image_id": cands.image_ids[samples.candidate.ravel()],
            **locations.to_dict(),
        },
        schema=dict(NEEDLE_STRUCT.to_schema()),
    ).to_struct("needles")
    duplicate, ambiguous, twins = qa_flags(samples, plan.pools[setting.grid], plan.picture_index())
    ids = np.arange(n, dtype=np.int64)
    return pl.DataFrame(
        {
            "sample_id": ids,
            "num_images": np.full(n, setting.num_images, dtype=np.int64),
            "grid": np.full(n, setting.grid, dtype=np.int64),
            "num_needles": np.full(n, setting.num_needles, dtype=np.int64),
            "haystack": _lists(
                _stitched_ids(setting.grid, samples.haystack), setting.num_images, pl.String
            ),
            "is_positive": samples.is_positive,
            "needles": _lists(needle, k, NEEDLE_STRUCT),
            "gold_answer": gold_answer_column(locations, k),
            "prompt": prompt_column(setting.num_images, setting.grid, texts, k),
            "paper_eval_subset": in_paper_eval_subset(ids, n, setting.num_needles),
            "haystack_has_duplicate_image": duplicate,
            "ambiguous_needles": ambiguous,
            "needles_with_twin_in_haystack": twins,
        },
        schema=SAMPLE_SCHEMA,
    )


def sample_rows(plan: Plan, setting: Setting) -> list[dict[str, Any]]:
    return sample_frame(plan, setting).to_dicts()


def used_image_rows(plan: Plan, source: CocoCaptions) -> list[dict[str, Any]]:
    used = np.unique(
        np.concatenate(
            [pool.ravel() for pool in plan.pools.values()]
            + [samples.candidate.ravel() for samples in plan.samples.values()]
        )
    )
    images = sorted(
        (plan.candidates.images[i] for i in used.tolist()), key=lambda image: image.image_id
    )
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


def qa_report(frame: pl.DataFrame) -> dict[str, int]:
    positives = frame.filter(pl.col("is_positive"))
    locations = positives.select(
        pl.col("needles").list.len().alias("needles"),
        pl.col("needles")
        .list.eval(pl.struct(pl.element().struct.field("image_index", "row", "col")))
        .list.n_unique()
        .alias("distinct"),
    )
    return {
        "samples": frame.height,
        "haystacks_with_duplicate_image": int(frame["haystack_has_duplicate_image"].sum()),
        "ambiguous_gold_answers": int((positives["ambiguous_needles"] > 0).sum()),
        "repeated_needle_slots": int((locations["distinct"] < locations["needles"]).sum()),
        "samples_with_twin_needle": int((frame["needles_with_twin_in_haystack"] > 0).sum()),
    }


def write_plan(
    plan: Plan,
    source: CocoCaptions,
    out_dir: str | Path,
    images_dir: str | Path | None,
    workers: int | None = None,
) -> dict[str, Any]:
    """Write the plan tables atomically (the whole folder appears at once); returns plan_info.

    Config tables are built and written on ``workers`` threads (their column work and parquet
    encoding release the GIL); each file's bytes do not depend on which thread wrote it.
    """
    report: dict[str, dict[str, int]] = {}
    settings = plan.config.settings()
    _ = plan.caption_texts  # built once, before the threads share it

    def write_samples(setting: Setting, staging: Path) -> dict[str, int]:
        frame = sample_frame(plan, setting)
        frame.write_parquet(staging / "samples" / f"{setting.name}.parquet")
        return qa_report(frame)

    inputs = [source.path, *([images_dir] if images_dir is not None else [])]
    with atomic_directory(out_dir, inputs=inputs) as staging:
        (staging / "pools").mkdir()
        (staging / "samples").mkdir()
        for grid in plan.pools:
            pool_frame(plan, grid).write_parquet(staging / "pools" / f"n{grid}.parquet")
        with ThreadPoolExecutor(max(1, workers or usable_cores())) as threads:
            written = threads.map(lambda setting: write_samples(setting, staging), settings)
            for setting, config_report in progress(
                zip(settings, written, strict=True),
                total=len(settings),
                desc="writing configs",
                unit="config",
            ):
                report[setting.name] = config_report
        pl.DataFrame(used_image_rows(plan, source)).write_parquet(staging / "images.parquet")
        info = {
            "family": "mmneedle",
            "benchsmith_version": __version__,
            "plan": plan.config.to_dict(),
            "captions": {"path": str(source.path), "sha256": source.sha256},
            "images_dir": str(images_dir) if images_dir is not None else None,
            "candidates": len(plan.candidates),
            "skipped": dict(sorted(source.skipped.items())),
            "twins": plan.twins,
            "stats": dict(sorted(plan.stats.items())),
            "configs": {name: report[name] for name in sorted(report)},
        }
        atomic_write_json(staging / "plan_info.json", info)
    return info
