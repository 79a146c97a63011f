"""Write a curated dataset: the kept rows, their decisions, a card and ``decisions.parquet``.

OUT_DIR is a dataset in Hugging Face layout with the source's config and split; rows are the
source rows unchanged plus ``difficulty`` and ``n_correct`` columns, and their ``provenance``
carries the curation decisions (and a source entry whose sha256 is the digest of the source
row, which ``benchsmith audit`` re-checks). Images joined from another config (MMNeedle's
haystacks) are copied over as they are, so the output loads on its own.
"""

from __future__ import annotations

import json
import shutil
import string
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import datasets
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from benchsmith import __version__
from benchsmith.builders.curate.config import CurateConfig
from benchsmith.builders.curate.decisions import REASONS
from benchsmith.builders.curate.pipeline import CurationResult
from benchsmith.core.atomic import atomic_directory, atomic_write_json, atomic_write_text
from benchsmith.core.hashing import params_hash, sha256_file
from benchsmith.core.progress import log
from benchsmith.core.provenance import PROVENANCE_FEATURE, code_revision
from benchsmith.publish.card import render_card
from benchsmith.publish.hf_layout import (
    DEFAULT_MAX_SHARD_BYTES,
    ShardedWriter,
    SplitWritten,
    configs_metadata,
    dataset_info_metadata,
)
from benchsmith.sources.hf_dataset import DatasetView, row_digest, split_files

FAMILY = "curated"
DECISIONS_FILE = "decisions.parquet"


def output_features(view: DatasetView) -> datasets.Features:
    source = datasets.Features.from_arrow_schema(pq.read_schema(view.files[0]))
    features = {k: v for k, v in source.items() if k not in ("difficulty", "n_correct")}
    features["difficulty"] = datasets.Value("string")
    features["n_correct"] = datasets.Value("int64")
    if "provenance" not in features:
        features["provenance"] = PROVENANCE_FEATURE
    return datasets.Features(features)


def columns_dict(view: DatasetView) -> dict[str, Any]:
    return {
        k: (vars(v) if k == "image_join" and v is not None else v)
        for k, v in vars(view.columns).items()
    }


def source_name(view: DatasetView) -> str:
    info = view.dataset_dir / "build_info.json"
    if info.is_file():
        data = json.loads(info.read_text(encoding="utf-8"))
        return f"benchsmith/{data.get('family', view.dataset_dir.name)}@{data.get('version', '')}"
    return view.dataset_dir.name


def curated_provenance(
    row: dict[str, Any],
    view: DatasetView,
    decisions: list[dict[str, Any]],
    p_hash: str,
    seed: int,
) -> dict[str, Any]:
    """The source's provenance (if any) extended with the curation decisions and a row source."""
    row_source = {
        "dataset": source_name(view),
        "split": view.split,
        "id": str(row[view.columns.id]),
        "file": f"{view.config}/{view.split}",
        "sha256": row_digest(row),
        "license": "",
        "url": "",
    }
    steps = [
        {
            "stage": f"curate/{d['stage']}",
            "action": d["action"],
            "reason": d["reason"] or "",
            "evidence": d["evidence"],
        }
        for d in decisions
    ]
    base = row.get("provenance")
    if base:
        return {
            **base,
            "sources": [*base["sources"], row_source],
            "decisions": [*base["decisions"], *steps],
        }
    return {
        "family": FAMILY,
        "builder_version": __version__,
        "code_revision": code_revision(),
        "params_hash": p_hash,
        "seed": seed,
        "sources": [row_source],
        "decisions": steps,
    }


def write_rows(
    staging: Path,
    view: DatasetView,
    result: CurationResult,
    features: datasets.Features,
    p_hash: str,
    seed: int,
    max_shard_bytes: int,
) -> SplitWritten:
    by_sample: dict[str, list[dict[str, Any]]] = {}
    for row in result.log.rows:
        by_sample.setdefault(row["sample_id"], []).append(row)
    kept = result.kept()
    writer = ShardedWriter(staging, view.config, view.split, features, max_shard_bytes)
    for batch in view.raw_batches():
        rows = []
        for row in batch.to_pylist():
            sample_id = str(row[view.columns.id])
            if sample_id not in kept:
                continue
            difficulty, n_correct = result.difficulty.get(sample_id, ("unrated", -1))
            out = {k: v for k, v in row.items() if k not in ("difficulty", "n_correct")}
            out["difficulty"] = difficulty
            out["n_correct"] = n_correct
            out["provenance"] = curated_provenance(
                row, view, by_sample.get(sample_id, []), p_hash, seed
            )
            rows.append(out)
        writer.write_rows(rows)
    return writer.close()


def joined_config_names(view: DatasetView) -> list[str]:
    """Configs the split's rows point into: ``image_join.config`` filled from each row."""
    join = view.columns.image_join
    if join is None:
        return []
    fields = sorted({name for _, name, _, _ in string.Formatter().parse(join.config) if name})
    if not fields:
        return [join.config]
    table = pads.dataset([str(p) for p in view.files], format="parquet").to_table(columns=fields)
    return sorted({join.config.format(**row) for row in table.to_pylist()})


def copy_joined_configs(
    staging: Path, view: DatasetView
) -> tuple[list[SplitWritten], dict[str, datasets.Features]]:
    """Configs the rows point into (e.g. ``haystacks_n2``) are copied unchanged, and only
    those, so the output loads on its own without dragging along the source's other configs."""
    join = view.columns.image_join
    copied: list[SplitWritten] = []
    features: dict[str, datasets.Features] = {}
    for config in joined_config_names(view):
        files = split_files(view.dataset_dir, config, join.split)
        relative = [path.relative_to(view.dataset_dir) for path in files]
        for path, rel in zip(files, relative, strict=True):
            (staging / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, staging / rel)
        copied.append(
            SplitWritten(
                config=config,
                split=join.split,
                num_examples=sum(pq.ParquetFile(p).metadata.num_rows for p in files),
                num_bytes=sum(p.stat().st_size for p in files),
                files=[rel.as_posix() for rel in relative],
            )
        )
        features[config] = datasets.Features.from_arrow_schema(pq.read_schema(files[0]))
    return copied, features


def publish_curated(
    view: DatasetView,
    result: CurationResult,
    config: CurateConfig,
    out_dir: str | Path,
    version: str,
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
) -> dict[str, Any]:
    settings = config.hashable()
    p_hash = params_hash({"curate": settings, "columns": columns_dict(view)})
    features = output_features(view)
    with atomic_directory(out_dir) as staging:
        written = write_rows(staging, view, result, features, p_hash, config.seed, max_shard_bytes)
        copied, copied_features = copy_joined_configs(staging, view)
        table = result.log.table()
        pq.write_table(table, staging / DECISIONS_FILE, compression="zstd")
        info = {
            "family": FAMILY,
            "version": version,
            "benchsmith_version": __version__,
            "code_revision": code_revision(),
            "params": settings,
            "params_hash": p_hash,
            "seed": config.seed,
            "source": {
                "dataset_dir": view.dataset_dir.as_posix(),
                "name": source_name(view),
                "config": view.config,
                "split": view.split,
                "columns": columns_dict(view),
                "files": {
                    p.relative_to(view.dataset_dir).as_posix(): sha256_file(p) for p in view.files
                },
                "joined_configs": [w.config for w in copied],
            },
            "inputs": result.inputs,
            "counts": {"source": len(result.log.order), "kept": len(result.kept())},
            "stages": result.log.stage_counts(),
            "skipped_stages": result.skipped_stages,
            "reports": result.reports,
            "decisions_sha256": sha256_file(staging / DECISIONS_FILE),
            "configs": {
                w.config: {"split": w.split, "num_examples": w.num_examples, "files": w.files}
                for w in [written]
            },
        }
        atomic_write_json(staging / "build_info.json", info)
        atomic_write_text(
            staging / "README.md",
            curated_card(info, written, {written.config: features, **copied_features}, copied),
        )
    log(f"curate: {written.num_examples} rows -> {out_dir} (version {version})")
    return info


def curated_card(
    info: dict[str, Any],
    written: SplitWritten,
    features: dict[str, datasets.Features],
    joined: Sequence[SplitWritten] = (),
) -> str:
    splits = [written, *joined]  # joined image configs are listed so that they load too
    metadata = {
        "pretty_name": f"{info['source']['name']} {info['source']['config']} (curated by benchsmith)",
        "tags": ["benchsmith", "curated", "multimodal"],
        "version": info["version"],
        "configs": configs_metadata(splits, written.config),
        "dataset_info": dataset_info_metadata(splits, features),
    }
    used = sorted({r for s in info["stages"] for r in (k.split(":", 1)[1] for k in s["reasons"])})
    context = {"info": info, "written": written, "reasons": {r: REASONS.get(r, "") for r in used}}
    return render_card("curated.md.j2", metadata, context)
