"""Publish an MMNeedle build (plan + render) as a versioned Hugging Face dataset folder.

``OUT/README.md`` (card), ``OUT/build_info.json``, ``OUT/data/haystacks_n{N}/test-*.parquet``
(stitched images with their cells) and ``OUT/data/m{M}_n{N}_k{K}/test-*.parquet`` (samples
that reference stitched ids). The folder is staged and swapped in whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow.parquet as pq

from benchsmith import __version__
from benchsmith.builders.mmneedle.render import plan_fingerprint
from benchsmith.core.atomic import atomic_directory, atomic_write_json, atomic_write_text
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import params_hash
from benchsmith.core.progress import log
from benchsmith.core.provenance import code_revision
from benchsmith.publish.card import render_card
from benchsmith.publish.hf_layout import (
    DEFAULT_MAX_SHARD_BYTES,
    SplitWritten,
    configs_metadata,
    dataset_info_metadata,
    write_split,
)
from benchsmith.publish.mmneedle_features import HAYSTACK_FEATURES, SAMPLE_FEATURES, haystack_config
from benchsmith.sources.coco import (
    ANNOTATIONS_LICENSE,
    ANNOTATIONS_ZIP_URL,
    CAPTIONS_RELPATH,
    IMAGES_DIRNAME,
)

SPLIT = "test"
BATCH = 32
COCO = "coco-2014"


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
                    fix=f"run `benchsmith mmneedle {step}` first",
                )
        plan_info = json.loads((plan_dir / "plan_info.json").read_text(encoding="utf-8"))
        render_info = json.loads((render_dir / "render_info.json").read_text(encoding="utf-8"))
        if render_info.get("plan_fingerprint") != plan_fingerprint(plan_dir):
            raise BenchsmithError(
                "the render folder was made from a different plan",
                path=render_dir,
                fix="rerun `benchsmith mmneedle render` on this plan",
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


def image_source(image: dict[str, Any]) -> dict[str, Any]:
    return {
        "dataset": COCO,
        "split": "val",
        "id": str(image["coco_image_id"]),
        "file": f"{IMAGES_DIRNAME}/{image['file_name']}",
        "sha256": image["sha256"],
        "license": image["license"],
        "url": image["flickr_url"] or image["coco_url"],
    }


def caption_source(inputs: BuildInputs, caption_id: int) -> dict[str, Any]:
    return {
        "dataset": COCO,
        "split": "val",
        "id": f"caption/{caption_id}",
        "file": CAPTIONS_RELPATH.as_posix(),
        "sha256": inputs.plan_info["captions"]["sha256"],
        "license": ANNOTATIONS_LICENSE,
        "url": ANNOTATIONS_ZIP_URL,
    }


def provenance(
    inputs: BuildInputs,
    sources: list[dict[str, Any]],
    decisions: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    return {
        "family": "mmneedle",
        "builder_version": __version__,
        "code_revision": code_revision(),
        "params_hash": inputs.params_hash,
        "seed": int(inputs.plan_info["plan"]["seed"]),
        "sources": sources,
        "decisions": decisions or [],
    }


def haystack_batches(inputs: BuildInputs, grid: int) -> Iterator[list[dict[str, Any]]]:
    cells_of = {
        row["stitched_id"]: row["cells"]
        for row in pl.read_parquet(inputs.plan_dir / "pools" / f"n{grid}.parquet").iter_rows(
            named=True
        )
    }
    # pre_buffer=False: with pre-buffering, pyarrow keeps every row group read so far alive,
    # so memory would grow with the whole input instead of one batch.
    rendered = pq.ParquetFile(inputs.render_dir / "stitched" / f"n{grid}.parquet", pre_buffer=False)
    for batch in rendered.iter_batches(batch_size=BATCH):
        rows = []
        for stitched_id, image, digest in zip(
            *(batch.column(i).to_pylist() for i in range(3)), strict=True
        ):
            cells = cells_of[stitched_id]
            rows.append(
                {
                    "stitched_id": stitched_id,
                    "grid": grid,
                    "image": {"bytes": image, "path": f"{stitched_id}.jpg"},
                    "cells": cells,
                    "sha256": digest,
                    "provenance": provenance(
                        inputs, [image_source(inputs.images[c["coco_image_id"]]) for c in cells]
                    ),
                }
            )
        yield rows


def sample_decisions(row: dict[str, Any]) -> list[dict[str, Any]]:
    """QA findings recorded on the row (legacy order keeps the original's flaws, flagged)."""
    decisions = []
    if row["haystack_has_duplicate_image"]:
        decisions.append(
            {
                "stage": "plan",
                "action": "flag",
                "reason": "DUPLICATE_IMAGE_IN_HAYSTACK",
                "evidence": "{}",
            }
        )
    if row["ambiguous_needles"]:
        evidence = json.dumps({"needles_in_several_slots": row["ambiguous_needles"]})
        decisions.append(
            {
                "stage": "plan",
                "action": "flag",
                "reason": "AMBIGUOUS_GOLD_ANSWER",
                "evidence": evidence,
            }
        )
    absent = sum(1 for n in row["needles"] if n["image_index"] is None)
    if row["is_positive"] and absent:
        evidence = json.dumps(
            {"absent_needles": absent, "slots": row["num_images"] * row["grid"] ** 2}
        )
        decisions.append(
            {
                "stage": "plan",
                "action": "change",
                "reason": "MORE_NEEDLES_THAN_SLOTS",
                "evidence": evidence,
            }
        )
    return decisions


def sample_batches(inputs: BuildInputs, config: str) -> Iterator[list[dict[str, Any]]]:
    frame = pl.read_parquet(inputs.plan_dir / "samples" / f"{config}.parquet")
    for chunk in frame.iter_slices(n_rows=1000):
        rows = []
        for row in chunk.iter_rows(named=True):
            sources = []
            for needle in row["needles"]:
                sources.append(caption_source(inputs, needle["caption_id"]))
                sources.append(image_source(inputs.images[needle["coco_image_id"]]))
            rows.append({**row, "provenance": provenance(inputs, sources, sample_decisions(row))})
        yield rows


def build_info(
    inputs: BuildInputs, version: str, written: list[SplitWritten], lock: dict[str, Any] | None
) -> dict[str, Any]:
    return {
        "family": "mmneedle",
        "version": version,
        "benchsmith_version": __version__,
        "code_revision": code_revision(),
        "libraries": inputs.render_info["libraries"],
        "params_hash": inputs.params_hash,
        "params": {"plan": inputs.plan_info["plan"], "render": inputs.render_info["render"]},
        "sources": {
            "captions": inputs.plan_info["captions"],
            "images_dir": inputs.render_info["images_dir"],
            "images": {
                "count": len(inputs.images),
                # one digest over (coco_image_id, sha256) of every source image the build used
                "manifest_sha256": params_hash(
                    sorted((i, row["sha256"]) for i, row in inputs.images.items())
                ),
            },
            "archives": lock or {},
        },
        "plan_fingerprint": inputs.render_info["plan_fingerprint"],
        "skipped": inputs.plan_info["skipped"],
        "stats": inputs.plan_info["stats"],
        "qa": inputs.plan_info["configs"],
        "configs": {
            w.config: {"split": w.split, "num_examples": w.num_examples, "files": w.files}
            for w in written
        },
    }


def publish_mmneedle(
    plan_dir: str | Path,
    render_dir: str | Path,
    out_dir: str | Path,
    version: str,
    lock_path: str | Path | None = None,
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
    image_check_path: str | Path | None = None,
) -> dict[str, Any]:
    inputs = BuildInputs.read(plan_dir, render_dir)
    image_check = None
    if image_check_path is not None:
        image_check = json.loads(Path(image_check_path).read_text(encoding="utf-8"))
    lock = None
    if lock_path and Path(lock_path).is_file():
        lock = json.loads(Path(lock_path).read_text(encoding="utf-8"))
    grids = sorted(int(p.stem[1:]) for p in (inputs.plan_dir / "pools").glob("n*.parquet"))
    sample_configs = sorted(p.stem for p in (inputs.plan_dir / "samples").glob("*.parquet"))
    written: list[SplitWritten] = []
    features = {}
    with atomic_directory(out_dir) as staging:
        for grid in grids:
            name = haystack_config(grid)
            written.append(
                write_split(
                    staging,
                    name,
                    SPLIT,
                    HAYSTACK_FEATURES,
                    haystack_batches(inputs, grid),
                    max_shard_bytes,
                )
            )
            features[name] = HAYSTACK_FEATURES
        for config in sample_configs:
            written.append(
                write_split(
                    staging,
                    config,
                    SPLIT,
                    SAMPLE_FEATURES,
                    sample_batches(inputs, config),
                    max_shard_bytes,
                )
            )
            features[config] = SAMPLE_FEATURES
        info = build_info(inputs, version, written, lock)
        info["image_check"] = image_check
        atomic_write_json(staging / "build_info.json", info)
        atomic_write_text(staging / "README.md", mmneedle_card(info, written, features))
    log(
        f"mmneedle publish: {len(grids)} haystack configs + {len(sample_configs)} sample configs -> {out_dir} (version {version})"
    )
    return info


def mmneedle_card(info: dict[str, Any], written: list[SplitWritten], features: dict) -> str:
    sample_configs = [w for w in written if not w.config.startswith("haystacks_")]
    default = (
        "m10_n2_k1"
        if any(w.config == "m10_n2_k1" for w in written)
        else (sample_configs[0].config if sample_configs else None)
    )
    metadata = {
        "pretty_name": "MMNeedle (benchsmith rebuild)",
        "license": "other",
        "license_name": "coco-annotations-cc-by-4.0-images-flickr",
        "license_details": "Captions: CC BY 4.0 (COCO). Images: each under its own Flickr licence, recorded per cell.",
        "language": ["en"],
        "task_categories": ["visual-question-answering"],
        "tags": ["multimodal", "long-context", "needle-in-a-haystack", "benchsmith"],
        "source_datasets": ["COCO 2014 val"],
        "version": info["version"],
        "configs": configs_metadata(written, default),
        "dataset_info": dataset_info_metadata(written, features),
    }
    context = {
        "info": info,
        "sample_configs": sorted(sample_configs, key=lambda w: w.config),
        "haystack_configs": [w for w in written if w.config.startswith("haystacks_")],
        "default_config": default,
    }
    return render_card("mmneedle.md.j2", metadata, context)
