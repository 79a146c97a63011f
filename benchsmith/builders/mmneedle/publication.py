"""MMNeedle's publication: what ``benchsmith publish mmneedle`` writes from a plan and a render.

``data/haystacks_n{N}/test-*.parquet`` (stitched images with their cells) and
``data/m{M}_n{N}_k{K}/test-*.parquet`` (samples that reference stitched ids), the family's part
of ``build_info.json`` and its card. The one publisher
(:func:`benchsmith.publish.publisher.publish`) stages the folder, writes the shards and the card.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from benchsmith.builders.mmneedle.arrow_columns import list_lengths, list_values, string_array
from benchsmith.builders.mmneedle.features import (
    HAYSTACK_FEATURES,
    SAMPLE_FEATURES,
    haystack_config,
)
from benchsmith.builders.mmneedle.plan_fingerprint import plan_fingerprint
from benchsmith.builders.mmneedle.provenance_columns import (
    ProvenanceTemplate,
    SourceTable,
    caption_entries,
    cell_sources,
    decisions_column,
    needle_sources,
    no_decisions,
)
from benchsmith.builders.mmneedle.rai import RAI
from benchsmith.builders.mmneedle.rows import (
    FLAG_COLUMNS,
    RowContext,
    caption_source,
    caption_source_id,
    flag_decisions,
    image_source,
    row_provenance,
)
from benchsmith.builders.mmneedle.stitched_writer import STITCHED_SCHEMA
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import params_hash
from benchsmith.family.base import Card, ConfigSpec, Publication
from benchsmith.hf.layout import SplitWritten

SPLIT = "test"
BATCH = 32
SAMPLE_BATCH = 1000


@dataclass
class BuildInputs:
    plan_dir: Path
    render_dir: Path
    plan_info: dict[str, Any]
    render_info: dict[str, Any]
    images: dict[int, dict[str, Any]]  # coco_image_id -> image row + sha256

    @classmethod
    def read(cls, plan_dir: str | Path, render_dir: str | Path) -> BuildInputs:
        plan_dir, render_dir = Path(plan_dir), Path(render_dir)
        for folder, marker, step in (
            (plan_dir, "plan_info.json", "plan"),
            (render_dir, "render_info.json", "render"),
        ):
            if not (folder / marker).is_file():
                raise BenchsmithError(
                    f"no {marker} in the {step} folder",
                    path=folder,
                    fix=f"run `benchsmith build mmneedle {step}` first",
                )
        plan_info = json.loads((plan_dir / "plan_info.json").read_text(encoding="utf-8"))
        render_info = json.loads((render_dir / "render_info.json").read_text(encoding="utf-8"))
        if render_info.get("plan_fingerprint") != plan_fingerprint(plan_dir):
            raise BenchsmithError(
                "the render folder was made from a different plan",
                path=render_dir,
                fix="rerun `benchsmith build mmneedle render` on this plan",
            )
        frame = pl.read_parquet(plan_dir / "images.parquet").join(
            pl.read_parquet(render_dir / "source_files.parquet").select("coco_image_id", "sha256"),
            on="coco_image_id",
            how="left",
        )
        images = {row["coco_image_id"]: row for row in frame.to_dicts()}
        return cls(plan_dir, render_dir, plan_info, render_info, images)

    @property
    def params_hash(self) -> str:
        return params_hash({"plan": self.plan_info["plan"], "render": self.render_info["render"]})

    @functools.cached_property
    def image_sources(self) -> SourceTable:
        """Every source image's provenance entry, made once by :func:`image_source` for all
        the configs (40,504 images in a full build)."""
        context = self.context
        keys = sorted(context.images)
        entries = row_provenance(context, [image_source(context.images[k]) for k in keys])
        return SourceTable(keys, entries["sources"], "COCO image")

    @property
    def context(self) -> RowContext:
        return RowContext(
            self.params_hash,
            int(self.plan_info["plan"]["seed"]),
            self.plan_info["captions"]["sha256"],
            self.images,
        )


def haystack_batches(inputs: BuildInputs, grid: int) -> Iterator[pa.Table]:
    """The ``haystacks_n{grid}`` rows, in the render's order, as tables: the JPEG bytes go from
    the render's column into the row groups as they are (through Python objects they were
    copied twice more, 8 GB each way in a full build), the cells and provenance are gathered
    from the plan's columns (see :mod:`~benchsmith.builders.mmneedle.provenance_columns`)."""
    schema = HAYSTACK_FEATURES.arrow_schema
    pool = pq.read_table(
        inputs.plan_dir / "pools" / f"n{grid}.parquet", columns=["stitched_id", "cells"]
    )
    row_of = {sid: k for k, sid in enumerate(pool.column("stitched_id").to_pylist())}
    planned_cells = pool.column("cells").combine_chunks().cast(schema.field("cells").type)
    path = inputs.render_dir / "stitched" / f"n{grid}.parquet"
    rendered = _stitched_file(path)
    context = inputs.context
    template = ProvenanceTemplate.of(lambda s, d: row_provenance(context, s, d))
    images = inputs.image_sources
    image_type = schema.field("image").type
    grid_value = pa.scalar(grid, pa.int64())
    for batch in rendered.iter_batches(batch_size=BATCH):
        ids = batch.column(0).to_pylist()
        unknown = [sid for sid in ids if sid not in row_of]
        if unknown or batch.column(1).null_count:
            what = f"stitched ids not in the plan: {unknown[:3]}" if unknown else "missing images"
            raise BenchsmithError(
                f"the render does not match the plan ({what})",
                path=path,
                fix="run `benchsmith build mmneedle render` again for this plan",
            )
        cells = planned_cells.take(pa.array([row_of[sid] for sid in ids], type=pa.int64()))
        paths = string_array([f"{sid}.jpg" for sid in ids])
        columns = {
            "stitched_id": batch.column(0),
            "grid": pa.repeat(grid_value, len(ids)),
            "image": pa.StructArray.from_arrays([batch.column(1), paths], fields=list(image_type)),
            "cells": cells,
            "sha256": batch.column(2),
            "provenance": template.column(cell_sources(cells, images), no_decisions(len(ids))),
        }
        yield pa.Table.from_arrays([columns[name] for name in schema.names], schema=schema)


def _stitched_file(path: Path) -> pq.ParquetFile:
    """A render's ``stitched/n{N}.parquet``, opened for reading batch by batch, its columns
    checked: its image column goes into the published rows as it is."""
    try:
        # pre_buffer=False: with pre-buffering, pyarrow keeps every row group read so far
        # alive, so memory would grow with the whole input instead of one batch. (memory_map
        # would halve the read, 3 s of a full build, but every page read stays mapped: 7 GB
        # of RSS.)
        rendered = pq.ParquetFile(path, pre_buffer=False)
    except (OSError, pa.ArrowException) as exc:
        raise BenchsmithError(
            f"cannot read the rendered images: {exc}",
            path=path,
            fix="run `benchsmith build mmneedle render` again",
        ) from None
    if not rendered.schema_arrow.equals(STITCHED_SCHEMA):
        raise BenchsmithError(
            f"the rendered images' columns are not the render's: {rendered.schema_arrow}",
            path=path,
            fix="run `benchsmith build mmneedle render` again",
        )
    return rendered


def sample_batches(inputs: BuildInputs, config: str) -> Iterator[pa.Table]:
    """A sample config's rows, 1,000 at a time: the plan's columns cast to the features, and
    their provenance gathered per needle (its caption, then its source image)."""
    schema = SAMPLE_FEATURES.arrow_schema
    planned = pa.schema([field for field in schema if field.name != "provenance"])
    path = inputs.plan_dir / "samples" / f"{config}.parquet"
    table = pq.read_table(path, columns=planned.names).cast(planned)
    context = inputs.context
    template = ProvenanceTemplate.of(lambda s, d: row_provenance(context, s, d))
    images = inputs.image_sources
    a_caption = row_provenance(context, [caption_source(context, 0)])["sources"][0]
    captions = caption_entries(a_caption, caption_source_id)
    for start in range(0, table.num_rows, SAMPLE_BATCH):
        chunk = table.slice(start, SAMPLE_BATCH).combine_chunks()
        needles = chunk.column("needles").chunk(0)
        sources = needle_sources(needles, captions, images)
        decisions = decisions_column(sample_decision_lists(context, chunk, needles))
        yield chunk.append_column(schema.field("provenance"), template.column(sources, decisions))


def sample_decision_lists(
    context: RowContext, chunk: pa.Table, needles: pa.Array
) -> list[list[dict[str, str]]]:
    """Each row's :func:`flag_decisions`, as its provenance writes them."""
    unplaced = list_values(needles).field("image_index").is_null()
    needle_row = np.repeat(np.arange(chunk.num_rows), list_lengths(needles))
    absent = np.bincount(
        needle_row, weights=unplaced.to_numpy(zero_copy_only=False), minlength=chunk.num_rows
    )
    flags = [chunk.column(name).to_pylist() for name in FLAG_COLUMNS]
    lists = []
    for k, values in enumerate(zip(*flags, strict=True)):
        decisions = flag_decisions(dict(zip(FLAG_COLUMNS, values, strict=True)), int(absent[k]))
        lists.append(row_provenance(context, [], decisions)["decisions"] if decisions else [])
    return lists


MMNEEDLE_LICENSE = """\
- Captions: COCO annotations, **CC BY 4.0**.
- Images: the stitched images are derivatives of COCO images, each under its own Flickr licence
  (several are NonCommercial or NoDerivs). The licence and URL of every cell are in each row's
  `provenance.sources`. Check them before redistribution.
- This card and the build code: Apache-2.0.
"""


class MmneedlePublication(Publication):
    """A plan + render folder pair, published as 4 haystack configs and 21 sample configs."""

    family = "mmneedle"
    card_template = "mmneedle.md.j2"
    audit_how = "the plan is re-run from the captions file, every stitched image is re-rendered from its COCO cells"

    def __init__(
        self,
        plan_dir: str | Path,
        render_dir: str | Path,
        lock_path: str | Path | None = None,
        image_check_path: str | Path | None = None,
    ):
        self.inputs = BuildInputs.read(plan_dir, render_dir)
        self.lock = None
        if lock_path and Path(lock_path).is_file():
            self.lock = json.loads(Path(lock_path).read_text(encoding="utf-8"))
        self.image_check = None
        if image_check_path is not None:
            path = Path(image_check_path)
            if not path.is_file():
                raise BenchsmithError(
                    "image-check report not found",
                    path=path,
                    fix="run `benchsmith build mmneedle check-images` first, or leave out "
                    "--image-check",
                )
            self.image_check = json.loads(path.read_text(encoding="utf-8"))
        plan = self.inputs.plan_dir
        self.grids = sorted(int(p.stem[1:]) for p in (plan / "pools").glob("n*.parquet"))
        self.sample_configs = sorted(p.stem for p in (plan / "samples").glob("*.parquet"))

    def input_paths(self) -> list[Path]:
        return [self.inputs.plan_dir, self.inputs.render_dir]

    def configs(self) -> Iterator[ConfigSpec]:
        inputs = self.inputs
        for grid in self.grids:
            yield ConfigSpec(
                haystack_config(grid),
                HAYSTACK_FEATURES,
                (SPLIT,),
                lambda split, max_bytes, grid=grid: haystack_batches(inputs, grid),
            )
        for config in self.sample_configs:
            yield ConfigSpec(
                config,
                SAMPLE_FEATURES,
                (SPLIT,),
                lambda split, max_bytes, config=config: sample_batches(inputs, config),
            )

    def build_info(self, written: list[SplitWritten]) -> dict[str, Any]:
        inputs = self.inputs
        return {
            "libraries": inputs.render_info["libraries"],
            "resize_engine": inputs.render_info.get("resize_engine", "pillow"),
            "jpeg_engine": inputs.render_info.get("jpeg_engine", "pillow"),
            "params_hash": inputs.params_hash,
            "params": {"plan": inputs.plan_info["plan"], "render": inputs.render_info["render"]},
            "roots": {
                "captions": inputs.plan_info["captions"]["path"],
                "images": inputs.render_info["images_dir"],
            },
            "sources": {
                "captions": {"sha256": inputs.plan_info["captions"]["sha256"]},
                "images": {
                    "count": len(inputs.images),
                    # one digest over (coco_image_id, sha256) of every source image the build used
                    "manifest_sha256": params_hash(
                        sorted((i, row["sha256"]) for i, row in inputs.images.items())
                    ),
                },
                "archives": self.lock or {},
            },
            "plan_fingerprint": inputs.render_info["plan_fingerprint"],
            "skipped": inputs.plan_info["skipped"],
            "stats": inputs.plan_info["stats"],
            "qa": inputs.plan_info["configs"],
            "twins": inputs.plan_info.get("twins"),
            "image_check": self.image_check,
        }

    def card(self, info: dict[str, Any], written: list[SplitWritten]) -> Card:
        return mmneedle_card(info, written)

    def summary(self, info: dict[str, Any]) -> str:
        return (
            f"mmneedle publish: {len(self.grids)} haystack configs + "
            f"{len(self.sample_configs)} sample configs"
        )


def mmneedle_card(info: dict[str, Any], written: list[SplitWritten]) -> Card:
    """The card of a published MMNeedle folder, from its build_info and splits alone."""
    sample_configs = sorted(
        (w for w in written if not w.config.startswith("haystacks_")), key=lambda w: w.config
    )
    default = (
        "m10_n2_k1"
        if any(w.config == "m10_n2_k1" for w in written)
        else (sample_configs[0].config if sample_configs else None)
    )
    metadata = {
        "pretty_name": "MMNeedle (benchsmith rebuild)",
        "license": "other",
        "license_name": "coco-annotations-cc-by-4.0-images-flickr",
        "language": ["en"],
        "task_categories": ["visual-question-answering"],
        "tags": ["multimodal", "long-context", "needle-in-a-haystack", "benchsmith"],
        "source_datasets": ["COCO 2014 val"],
    }
    context = {
        "info": info,
        "sample_configs": sample_configs,
        "haystack_configs": [w for w in written if w.config.startswith("haystacks_")],
        "default_config": default,
    }
    return Card(metadata, context, default, license_text=MMNEEDLE_LICENSE, rai=RAI)
