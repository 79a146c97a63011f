"""Publish a VL-ICL build directory as a versioned Hugging Face dataset folder.

``OUT/data/<task>/{support,query}-*.parquet`` (one config per task, images embedded),
``OUT/data/episodes/{hashed,legacy}-*.parquet`` (the materialised demonstrations; one split
per sampler, since a user evaluates with one of the two protocols), the family's part of
``build_info.json`` and the card context (:mod:`.card`). The one publisher stages the folder,
writes the shards and swaps the folder in whole.

Source images are read from their roots while writing, each checked against the sha256 the
build recorded, so a changed source is an error naming the file, never a silently different
dataset. Rows stream in batches capped by image bytes (a quarter of the shard size) and are
written as they come: memory is bounded by the shard size, not by the dataset.

Query rows listed in ``leakage.json`` ``removed`` are dropped with the episodes that ask them
(legacy episodes of the other queries are kept as drawn); the card reports every removal.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets
import PIL
from PIL import features as pil_features

from benchsmith import __version__
from benchsmith.builders.vlicl.build_dir import VliclBuildDir
from benchsmith.builders.vlicl.card import sorted_histogram, vlicl_card
from benchsmith.builders.vlicl.features import (
    COMMON,
    EPISODE_FEATURES,
    EPISODES_CONFIG,
    EXTRAS,
    REQUIRED_EXTRAS,
    SAMPLERS,
    SPLITS,
    TASKS,
    class_label_columns,
    task_features,
)
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.progress import log
from benchsmith.core.records import decision_record, provenance
from benchsmith.family.base import Card, ConfigSpec, Publication
from benchsmith.hf.batches import batches_by_image_bytes
from benchsmith.hf.image_names import neutral_image_name, source_extension
from benchsmith.hf.layout import SplitWritten

BATCH_ROWS = 64
MIN_BATCH_BYTES = 256 * 1024


def default_leakage_report(plan_dir: Path) -> Path:
    """``leakage.json`` next to the plan, where the pipeline and ``build vlicl leakage`` write
    it; one inside the plan (where 0.1 wrote it) is read when there is none beside it."""
    beside, inside = plan_dir.parent / "leakage.json", plan_dir / "leakage.json"
    return inside if not beside.is_file() and inside.is_file() else beside


@dataclass
class PublishInputs:
    build: VliclBuildDir
    leakage: dict[str, Any]
    removed: dict[str, set[str]]

    @classmethod
    def read(
        cls,
        build_dir: str | Path,
        leakage_path: str | Path | None = None,
        roots_override: Mapping[str, Any] | None = None,
    ) -> PublishInputs:
        build = VliclBuildDir.read(build_dir, roots_override)
        path = Path(leakage_path) if leakage_path else default_leakage_report(build.path)
        if not path.is_file():
            raise BenchsmithError(
                "no leakage report for this build",
                path=path,
                fix=f"run `benchsmith build vlicl leakage {build.path}` first",
            )
        leakage = json.loads(path.read_text(encoding="utf-8"))
        if leakage.get("build_fingerprint") != build.fingerprint():
            raise BenchsmithError(
                "the leakage report was made for a different build",
                path=path,
                fix=f"rerun `benchsmith build vlicl leakage {build.path}`",
            )
        unknown = [t for t in build.tasks if t not in TASKS]
        if unknown:
            raise BenchsmithError(
                f"no published schema for task(s) {unknown}; known: {list(TASKS)}",
                path=build.path / "build_info.json",
                fix="build only the supported tasks (vlicl.tasks in params.yaml)",
            )
        removed = {
            t: set(leakage.get("tasks", {}).get(t, {}).get("removed", [])) for t in build.tasks
        }
        return cls(build, leakage, removed)

    @property
    def tasks(self) -> list[str]:
        return [t for t in TASKS if t in self.build.tasks]

    def provenance(
        self, sources: list[dict[str, Any]], decisions: list[dict[str, str]]
    ) -> dict[str, Any]:
        info = self.build.info
        return provenance(
            family="vlicl",
            params_hash=info["params_hash"],
            seed=int(info.get("seed", 0)),
            sources=sources,
            decisions=decisions,
            builder_version=str(info.get("builder_version", __version__)),
        )


def _decision(reason: str, evidence: Any, action: str = "flag") -> dict[str, str]:
    return decision_record("leakage", action, reason, evidence)


def support_flags(leakage_task: Mapping[str, Any]) -> dict[str, list[dict[str, str]]]:
    """Decisions for support rows that duplicate a removed query image (kept, flagged)."""
    flags: dict[str, list[dict[str, str]]] = {}
    for kind in ("exact_support_query", "near_support_query"):
        for finding in leakage_task.get(kind, []):
            for support_id in finding["support_ids"]:
                flags.setdefault(support_id, []).append(
                    _decision(
                        "DUPLICATES_A_REMOVED_QUERY_IMAGE",
                        {k: finding[k] for k in ("query_image", "distance", "query_ids")},
                    )
                )
    return flags


def task_row(
    inputs: PublishInputs,
    task: str,
    split: str,
    row: dict[str, Any],
    decisions: list[dict[str, str]],
) -> dict[str, Any]:
    """One build row -> one published row: extras as typed columns, images embedded."""
    where = inputs.build.rows_path(task, split)
    extras = row.get("extras") or {}
    missing = [k for k in REQUIRED_EXTRAS[task][split] if k not in extras]
    if row.get("task") != task or row.get("split") != split or missing:
        raise BenchsmithError(
            f"row {row.get('id')!r} does not follow the build format (task/split "
            f"{row.get('task')}/{row.get('split')}, missing extras {missing})",
            path=where,
            fix="rerun `benchsmith build vlicl plan`",
        )
    out: dict[str, Any] = {k: row[k] for k in COMMON if k != "images"}
    out.update({k: extras.get(k) for k in EXTRAS[task]})
    for column, label in class_label_columns(task_features(task)).items():
        value = out[column]
        if value is not None:
            if value not in label.names:
                raise BenchsmithError(
                    f"row {row['id']}: {column} {value!r} is not one of {label.names}", path=where
                )
            out[column] = label.str2int(value)
    out["images"] = []
    for ref in row["images"]:
        data = inputs.build.read_image(ref)
        out["images"].append(
            {"bytes": data, "path": neutral_image_name(data, source_extension(ref["file"]))}
        )
    out["provenance"] = inputs.provenance(row.get("sources") or [], decisions)
    return out


def batched(rows: Iterable[dict[str, Any]], max_bytes: int) -> Iterator[list[dict[str, Any]]]:
    return batches_by_image_bytes(rows, max_bytes, BATCH_ROWS)


def task_rows(
    inputs: PublishInputs, task: str, split: str, tally: Callable[[dict[str, Any]], None]
) -> Iterator[dict[str, Any]]:
    removed = inputs.removed[task] if split == "query" else set()
    flags = support_flags(inputs.leakage["tasks"].get(task, {})) if split == "support" else {}
    for row in inputs.build.rows(task, split):
        if row["id"] in removed:
            continue
        published = task_row(inputs, task, split, row, flags.get(row["id"], []))
        tally(published)
        yield published


def episode_rows(
    inputs: PublishInputs, sampler: str, kept: dict[str, set[str]], support: dict[str, set[str]]
) -> Iterator[dict[str, Any]]:
    where = inputs.build.path / "episodes.jsonl"
    for episode in inputs.build.episodes():
        task = episode["task"]
        if episode["sampler"] != sampler or task not in kept:
            continue
        if episode["query_id"] not in kept[task]:
            continue  # its query was removed by the leakage stage
        unknown = [d for d in episode["demo_ids"] if d not in support[task]]
        if unknown:
            raise BenchsmithError(
                f"episode of {episode['query_id']} names support rows that do not exist: "
                f"{unknown[:3]}",
                path=where,
                fix="rerun `benchsmith build vlicl plan`",
            )
        extras = episode.get("extras") or {}
        reveals = extras.get("reveals_query_expression")
        decisions = []
        if reveals:
            decisions.append(_decision("DEMO_SHOWS_QUERY_EXPRESSION", {"sampler": sampler}))
        yield {
            **{k: episode[k] for k in ("task", "sampler", "seed", "n_shot", "query_id")},
            "demo_ids": list(episode["demo_ids"]),
            "demo_answers": [str(a) for a in episode["demo_answers"]],
            "classes": extras.get("classes"),
            "distractor": extras.get("distractor"),
            "reveals_query_expression": reveals,
            "provenance": inputs.provenance([], decisions),
        }


def _ids(rows: Iterable[dict[str, Any]]) -> set[str]:
    return {row["id"] for row in rows}


def build_info(
    inputs: PublishInputs,
    written: list[SplitWritten],
    histograms: dict[str, dict[str, Counter]],
) -> dict[str, Any]:
    """VL-ICL's part of build_info.json (the publisher adds version, code and configs)."""
    info = inputs.build.info
    return {
        "mode": info.get("mode", "rebuild"),
        "builder_version": info.get("builder_version"),
        "libraries": {
            "pillow": PIL.__version__,
            "freetype": pil_features.version("freetype2"),
            "datasets": datasets.__version__,
        },
        "params": info.get("params", {}),
        "params_hash": info["params_hash"],
        "seed": info.get("seed", 0),
        "roots": {k: str(v) if v else None for k, v in inputs.build.roots.items()},
        "font": info.get("font"),
        "build_fingerprint": inputs.leakage["build_fingerprint"],  # hashes the build's paths too
        **rederivable_info(inputs, written),
        "answer_histograms": {
            t: {s: sorted_histogram(c) for s, c in splits.items()}
            for t, splits in histograms.items()
            if t == "clevr"
        },
    }


def rederivable_info(inputs: PublishInputs, written: list[SplitWritten]) -> dict[str, Any]:
    """The part of build_info.json that follows from the build and leakage check alone: what
    the audit, which re-runs both, re-derives and compares (but the leakage report's
    ``build_fingerprint``, a hash of the build folder, whose build_info records its paths)."""
    info = inputs.build.info
    by_config: dict[str, dict[str, Any]] = {}
    for w in written:
        by_config.setdefault(w.config, {})[w.split] = {"num_examples": w.num_examples}
    built = info.get("counts", {})
    counts = {
        t: {
            "support": {
                "built": built[t]["support"],
                "published": by_config[t]["support"]["num_examples"],
            },
            "query": {
                "built": built[t]["query"],
                "removed": len(inputs.removed[t]),
                "published": by_config[t]["query"]["num_examples"],
            },
        }
        for t in inputs.tasks
    }
    return {
        "counts": counts,
        "choices": info.get("choices", []),
        "stats": info.get("stats", {}),
        "sources_digest": info.get("sources_digest", {}),
        "leakage": {k: v for k, v in inputs.leakage.items() if k != "format"},
    }


class VliclPublication(Publication):
    """A VL-ICL build folder + leakage report: one config per task and the episodes config."""

    family = "vlicl"
    card_template = "vlicl.md.j2"
    audit_how = "the plan and the leakage check are re-run from the source folders, operator images re-rendered with the recorded font"

    def __init__(
        self,
        build_dir: str | Path,
        leakage_path: str | Path | None = None,
        roots_override: Mapping[str, Any] | None = None,
    ):
        self.inputs = PublishInputs.read(build_dir, leakage_path, roots_override)
        self.histograms: dict[str, dict[str, Counter]] = {}

    def input_paths(self) -> list[Path]:
        roots = [r for r in self.inputs.build.roots.values() if r is not None]
        return [self.inputs.build.path, *roots]

    def configs(self) -> Iterator[ConfigSpec]:
        inputs = self.inputs
        for task in inputs.tasks:
            yield ConfigSpec(
                task,
                task_features(task),
                SPLITS,
                lambda split, max_bytes, task=task: self._task_batches(task, split, max_bytes),
            )
        yield ConfigSpec(EPISODES_CONFIG, EPISODE_FEATURES, SAMPLERS, self._episode_batches)

    def _task_batches(self, task: str, split: str, max_bytes: int) -> Iterator[list[dict]]:
        counter = self.histograms.setdefault(task, {}).setdefault(split, Counter())
        rows = task_rows(self.inputs, task, split, lambda r: counter.update([r["answer"]]))
        log(f"vlicl publish: {task}/{split}")
        return batched(rows, batch_bytes(max_bytes))

    def _episode_batches(self, sampler: str, max_bytes: int) -> Iterator[list[dict]]:
        inputs = self.inputs
        kept = {t: _ids(inputs.build.rows(t, "query")) - inputs.removed[t] for t in inputs.tasks}
        support = {t: _ids(inputs.build.rows(t, "support")) for t in inputs.tasks}
        return batched(episode_rows(inputs, sampler, kept, support), batch_bytes(max_bytes))

    def build_info(self, written: list[SplitWritten]) -> dict[str, Any]:
        return build_info(self.inputs, written, self.histograms)

    def card(self, info: dict[str, Any], written: list[SplitWritten]) -> Card:
        return vlicl_card(info)

    def summary(self, info: dict[str, Any]) -> str:
        removed = sum(len(r) for r in self.inputs.removed.values())
        return (
            f"vlicl publish: {len(self.inputs.tasks)} task configs + episodes "
            f"({removed} leaking queries removed)"
        )


def batch_bytes(max_shard_bytes: int) -> int:
    """Image bytes per row group: a quarter of the shard size, at least MIN_BATCH_BYTES."""
    return max(MIN_BATCH_BYTES, max_shard_bytes // 4)
