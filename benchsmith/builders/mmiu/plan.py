"""``benchsmith build mmiu plan``: every item of every configured task, written as a plan.

The plan folder holds ``build_info.json`` (config, seed, params hash, source roots, counts,
counted skips and the option report of every task) and ``items/<task>.jsonl``: one finished
item per line, its images as references (:mod:`.images`) with the sha256 of the bytes each
renders to. Nothing is copied from the sources; publish renders the images (or, for ScanNet,
keeps only the references). Same sources and params: same bytes.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith import __version__
from benchsmith.builders.mmiu.config import COCO_TASKS, SCANNET_TASKS, MmiuConfig
from benchsmith.builders.mmiu.images import ImageSources
from benchsmith.builders.mmiu.items import finish
from benchsmith.builders.mmiu.scene_survey import SurveyCache, survey_scenes
from benchsmith.builders.mmiu.scenes import load_scenes, scene_ids, scene_labels
from benchsmith.builders.mmiu.tasks import GENERATORS
from benchsmith.builders.mmiu.tasks.context import TaskContext
from benchsmith.core.atomic import atomic_directory
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.executor import ExecutorConfig
from benchsmith.core.hashing import canonical_json, params_hash
from benchsmith.core.progress import log
from benchsmith.core.rng import derived_rng
from benchsmith.hf.roots import portable_roots
from benchsmith.options.distractors import OptionSet, balanced_positions, option_report

PLAN_FORMAT = 1


@dataclass(frozen=True)
class MmiuSources:
    scannet: Path | None  # the ScanNet root (scans/, labels tsv, Tasks/)
    coco: Path | None  # the COCO root (annotations/, val2014/)
    release: Path | None = None  # the official MMIU release (ingest mode)


@dataclass(frozen=True)
class PlanSummary:
    counts: dict[str, int]
    skips: dict[str, dict[str, int]]


def _check_sources(config: MmiuConfig, sources: MmiuSources) -> None:
    if config.mode == "ingest":
        if sources.release is None or not Path(sources.release).is_dir():
            raise BenchsmithError(
                f"ingest mode needs the MMIU release folder ({sources.release})",
                path=sources.release,
                fix="pass --ingest-dir DIR (all.parquet + image folders), or set "
                "mmiu.sources.ingest_dir",
            )
        return
    needs = {
        "scannet": any(t in SCANNET_TASKS for t in config.tasks),
        "coco": any(t in COCO_TASKS for t in config.tasks),
    }
    for name, needed in needs.items():
        folder = getattr(sources, name)
        if needed and (folder is None or not Path(folder).is_dir()):
            raise BenchsmithError(
                f"the {name} source folder is missing ({folder})",
                path=folder,
                fix=f"run `benchsmith source prepare {name}`, or set mmiu.sources.{name}",
            )


def build_items(
    config: MmiuConfig,
    sources: MmiuSources,
    executor: ExecutorConfig | None = None,
    pairs_cache: Path | None = None,
) -> tuple[dict[str, list], Counter]:
    """Items per task (in task order) and the counted skips. ScanNet frame extraction runs on
    ``executor`` (None: in this process) and keeps each finished scene in ``pairs_cache``
    (None: nowhere); neither changes a byte of the items."""
    _check_sources(config, sources)
    coco_images = Path(sources.coco) / "val2014" if sources.coco else None
    with ImageSources(scannet=sources.scannet, coco_images=coco_images) as images:
        ctx = TaskContext(config, images)
        if any(t in SCANNET_TASKS for t in config.tasks):
            root = Path(sources.scannet)
            labels = scene_labels(root)
            cache = SurveyCache(Path(pairs_cache)) if pairs_cache else None
            surveys = survey_scenes(root, scene_ids(root, config.scene_split), config.frames,
                                    executor, cache)  # fmt: skip
            for scene_id, survey in surveys.items():
                images.adopt_index(scene_id, survey.index)  # opened below without a pass
            ctx.scenes = load_scenes(root, config.scene_split, images, labels)
            ctx.use_pairs({s: survey.pairs for s, survey in surveys.items()})
            log(f"mmiu plan: {len(ctx.scenes)} ScanNet scene(s)")
        if any(t in COCO_TASKS for t in config.tasks):
            from benchsmith.sources.coco.reader import CAPTIONS_RELPATH, read_captions

            ctx.coco = read_captions(Path(sources.coco) / CAPTIONS_RELPATH)
        items: dict[str, list[dict[str, Any]]] = {}
        for task in config.tasks:
            drafts = GENERATORS[task](ctx)
            if not drafts:
                reasons = {r: c for (t, r), c in ctx.skips.items() if t == task}
                raise BenchsmithError(
                    f"task {task} produced no item (skips: {reasons or 'no candidate frames'})",
                    fix="use more scenes or frames, or loosen mmiu.frames limits in params.yaml",
                )
            rng = derived_rng(config.seed, "mmiu", f"{task}/positions")
            positions = balanced_positions(len(drafts), config.options.n_options, rng)
            items[task] = [
                finish(draft, k, position, images)
                for k, (draft, position) in enumerate(zip(drafts, positions, strict=True))
            ]
            log(f"mmiu plan: {task}: {len(drafts)} item(s)")
    return items, ctx.skips, ctx.notes


def task_option_report(rows: list[dict[str, Any]], strict: bool = True) -> dict[str, Any]:
    """The option guarantees of one task; a rebuilt task that breaks one is a bug (raised),
    an ingested one is reported as found."""
    sets = [OptionSet(r["options"], r["answer_index"], r["option_methods"]) for r in rows]
    report = option_report(sets)
    if strict and not report.ok:
        raise BenchsmithError(
            f"task {rows[0]['task']}: options break a guarantee ({report.as_dict()})",
            fix="this is a bug in the task's distractors: report it with the params used",
        )
    return report.as_dict()


def build_mmiu(
    config: MmiuConfig,
    sources: MmiuSources,
    out_dir: str | Path,
    executor: ExecutorConfig | None = None,
    pairs_cache: Path | None = None,
) -> PlanSummary:
    out_dir = Path(out_dir)
    ingest = config.mode == "ingest"
    extra: dict[str, Any] = {}
    if ingest:
        from benchsmith.builders.mmiu.ingest import ingest_items, ingest_report

        _check_sources(config, sources)
        items, skips = ingest_items(Path(sources.release))
        extra["ingest"] = ingest_report(items)
        notes: Counter = Counter()
    else:
        items, skips, notes = build_items(config, sources, executor, pairs_cache)
    skip_table: dict[str, dict[str, int]] = {}
    for (task, reason), count in sorted(skips.items()):
        skip_table.setdefault(task, {})[reason] = count
    note_table: dict[str, dict[str, int]] = {}
    for (task, what), count in sorted(notes.items()):
        note_table.setdefault(task, {})[what] = count
    info = {
        "family": "mmiu",
        "plan_format": PLAN_FORMAT,
        "mode": config.mode,
        "builder_version": __version__,
        "config": config.as_dict(),
        "params_hash": params_hash(config.as_dict()),
        "seed": config.seed,
        "roots": portable_roots(
            {"release": sources.release}
            if ingest
            else {"scannet": sources.scannet, "coco": sources.coco},
            out_dir,
        ),
        "counts": {task: len(rows) for task, rows in items.items()},
        "skips": skip_table,
        "notes": note_table,
        "options": {task: task_option_report(rows, not ingest) for task, rows in items.items()},
        **extra,
    }
    with atomic_directory(out_dir) as staging:
        (staging / "items").mkdir()
        for task, rows in items.items():
            text = "".join(canonical_json(row) + "\n" for row in rows)
            (staging / "items" / f"{task}.jsonl").write_text(text, encoding="utf-8")
        (staging / "build_info.json").write_text(
            json.dumps(info, indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
    return PlanSummary(info["counts"], skip_table)
