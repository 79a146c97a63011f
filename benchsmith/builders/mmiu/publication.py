"""Publish an MMIU plan as a versioned Hugging Face dataset folder.

``OUT/data/<task>/test-*.parquet`` per task and ``OUT/data/circular/test-*.parquet``. Publish
refuses a plan whose shortcut report (``build mmiu check``) is missing, stale or failed, so a
published config always passed the gate.

ScanNet images (``--scannet-images``, ``mmiu.publish.scannet_images``):

- ``reference`` (the default): ScanNet's terms forbid redistributing its data, so ScanNet
  images are not embedded: their ``images`` entries are null and ``image_refs`` names scene,
  frame, rendering and sha256; ``benchsmith build mmiu rehydrate`` fills them in from your own
  ScanNet copy, checking every sha256;
- ``embed``: every image embedded (for your own use, never for sharing).

COCO images are always embedded (their Flickr licences allow it with attribution; each row's
provenance carries the image's licence and URL). Every image is rendered from its source and
checked against the sha256 the plan recorded, so a changed source is an error naming it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import datasets
import PIL

from benchsmith import __version__
from benchsmith.builders.mmiu.circular import rotate_item
from benchsmith.builders.mmiu.config import (
    RELATIONSHIPS,
    SCANNET_IMAGES,
    SCANNET_TASKS,
    TASK_ABBR,
    TASKS,
)
from benchsmith.builders.mmiu.features import CIRCULAR_CONFIG, SPLIT, features_for
from benchsmith.builders.mmiu.images import ImageSources, with_sha256
from benchsmith.builders.mmiu.plan_dir import MmiuPlanDir
from benchsmith.builders.mmiu.row_images import RowImageRenderer, row_images
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.executor import ExecutorConfig
from benchsmith.core.progress import log
from benchsmith.core.records import decision_record, provenance
from benchsmith.family.base import Card, ConfigSpec, Publication
from benchsmith.hf.batches import batches_by_image_bytes
from benchsmith.hf.layout import SplitWritten

BATCH_ROWS = 32
REF_KEYS = ("kind", "scene", "frame", "file", "params", "sha256")


def read_shortcuts(plan: MmiuPlanDir, path: Path) -> dict[str, Any]:
    fix = f"run `benchsmith build mmiu check {plan.path}`"
    if not path.is_file():
        raise BenchsmithError("no shortcut report for this plan", path=path, fix=fix)
    report = json.loads(path.read_text(encoding="utf-8"))
    if report.get("plan_fingerprint") != plan.fingerprint():
        raise BenchsmithError("the shortcut report was made for another plan", path=path, fix=fix)
    if report.get("failed") and plan.mode == "rebuild":
        raise BenchsmithError(
            f"config(s) {report['failed']} failed the shortcut check: a blind rule beats chance",
            path=path,
            fix="see the report's rules; fix the distractors, or list the config in "
            "mmiu.shortcuts.allow to publish it anyway (the card then says so)",
        )
    return report


def published_row(
    row: dict[str, Any],
    info: dict[str, Any],
    sources: ImageSources,
    embed_scannet: bool,
    images: list[dict[str, Any] | None] | None = None,
) -> dict[str, Any]:
    """One plan item -> one published row (images rendered and checked, or referenced);
    ``images`` when they were already rendered (:class:`.row_images.RowImageRenderer`)."""
    if images is None:
        images = row_images(row["images"], sources, embed_scannet)
    out = {
        "id": row["id"],
        "task": row["task"],
        "task_abbr": TASK_ABBR.get(row["task"], ""),
        "relationship": RELATIONSHIPS.index(row["relationship"]),
        "source_dataset": row.get("source_dataset")
        or ("scannet" if row["task"] in SCANNET_TASKS else "coco"),
        "question": row["question"],
        "context": row["context"],
        "options": list(row["options"]),
        "answer": row["answer"],
        "answer_index": int(row["answer_index"]),
        "num_options": len(row["options"]),
        "prompt_order": row["prompt_order"],
        "images": images,
        "image_refs": [{k: ref[k] for k in REF_KEYS} for ref in row["images"]],
        "num_images": len(row["images"]),
        "distractor_method": row["distractor_method"],
        "camera_poses": row["camera_poses"],
        "pose_convention": row["pose_convention"],
        "coord_frame": row["coord_frame"],
        "task_extras": row["task_extras"],
        "source_ids": list(row["source_ids"]),
        "provenance": provenance(
            family="mmiu",
            params_hash=info["params_hash"],
            seed=int(info["seed"]),
            sources=row["sources"],
            decisions=[*(row.get("decisions") or []), *distractor_decision(row)],
            builder_version=str(info.get("builder_version", __version__)),
        ),
    }
    if "item_id" in row:
        out["item_id"], out["rotation"] = row["item_id"], int(row["rotation"])
    return out


def distractor_decision(row: dict[str, Any]) -> list[dict[str, str]]:
    """How the distractors were made, counted by method: never per option, so nothing in a
    row marks which option is the gold (a column of per-option methods did, with ``gold``).
    None for an ingested release item: its distractors are the release's."""
    if row["distractor_method"] == "release":
        return []
    methods = Counter(m for k, m in enumerate(row["option_methods"]) if k != row["answer_index"])
    return [decision_record("distractors", "generate", "DISTRACTOR_METHODS", dict(methods))]


def published_task_order(plan: Any) -> list[str]:
    """The tasks in the order their configs, and the circular config's rows, are published
    (the release's order for an ingest, else MMIU's task list); the audit follows it."""
    if plan.mode == "ingest":
        return list(plan.tasks)
    return [t for t in TASKS if t in plan.tasks]


def rotations(row: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The item once per rotation of its options, images not yet hashed (cheap: the ids and
    order of the circular config's rows)."""
    for rotation in range(len(row["options"])):
        yield rotate_item(row, rotation)


def with_image_hashes(rotated: dict[str, Any], sources: ImageSources) -> dict[str, Any]:
    """A rotated item whose changed images are rendered and hashed."""
    images = [ref if "sha256" in ref else with_sha256(ref, sources) for ref in rotated["images"]]
    return {**rotated, "images": images}


def circular_rows(row: dict[str, Any], sources: ImageSources) -> Iterator[dict[str, Any]]:
    for rotated in rotations(row):
        yield with_image_hashes(rotated, sources)


def batched(rows: Iterable[dict[str, Any]], max_bytes: int) -> Iterator[list[dict[str, Any]]]:
    return batches_by_image_bytes(rows, max_bytes, BATCH_ROWS)


class MmiuPublication(Publication):
    family = "mmiu"
    card_template = "mmiu.md.j2"
    audit_how = (
        "the plan is rebuilt from the recorded ScanNet and COCO copies with the recorded "
        "parameters, every image re-rendered and checked by sha256"
    )

    def __init__(
        self,
        plan_dir: str | Path,
        shortcuts: str | Path | None = None,
        scannet_images: str = "reference",
        roots_override: Mapping[str, str] | None = None,
        executor: ExecutorConfig | None = None,
    ):
        if scannet_images not in SCANNET_IMAGES:
            raise BenchsmithError(f"--scannet-images must be one of {SCANNET_IMAGES}",
                                  fix="use reference (shareable) or embed (private use)")  # fmt: skip
        self.plan = MmiuPlanDir.read(plan_dir, roots_override)
        path = Path(shortcuts) if shortcuts else self.plan.path.parent / "shortcuts.json"
        self.shortcuts = read_shortcuts(self.plan, path)
        self.embed_scannet = scannet_images == "embed"
        self.scannet_images = scannet_images
        self.letters: dict[str, Counter] = {}
        self.executor = executor  # where images are rendered (None: in this process)
        self._renderer = RowImageRenderer()

    def input_paths(self) -> list[Path]:
        return [self.plan.path, *(Path(r) for r in self.plan.roots.values())]

    @property
    def tasks(self) -> list[str]:
        return published_task_order(self.plan)

    def configs(self) -> Iterator[ConfigSpec]:
        # The renderer (its worker pool or Ray connection) lives while the publisher writes
        # the configs: it draws each config's batches while this generator waits at a yield.
        with RowImageRenderer(self.executor) as renderer:
            self._renderer = renderer
            for task in self.tasks:
                yield ConfigSpec(task, features_for(task), (SPLIT,),
                                 lambda split, max_bytes, task=task: self._batches(task, max_bytes))  # fmt: skip
            yield ConfigSpec(CIRCULAR_CONFIG, features_for(CIRCULAR_CONFIG), (SPLIT,),
                             lambda split, max_bytes: self._circular(max_bytes))  # fmt: skip
        self._renderer = RowImageRenderer()

    def _rows(self, task: str) -> Iterator[dict[str, Any]]:
        counter = self.letters.setdefault(task, Counter())
        with self.plan.image_sources() as sources:
            rows = self.plan.rows(task)
            for row, images in self._renderer.rendered(rows, sources, self.embed_scannet):
                counter[row["answer"]] += 1
                yield published_row(row, self.plan.info, sources, self.embed_scannet, images)

    def _batches(self, task: str, max_bytes: int) -> Iterator[list[dict[str, Any]]]:
        log(f"mmiu publish: {task}")
        return batched(self._rows(task), max(256 * 1024, max_bytes // 4))

    def _circular(self, max_bytes: int) -> Iterator[list[dict[str, Any]]]:
        def rotations(sources: ImageSources) -> Iterator[dict[str, Any]]:
            for task in self.tasks:
                for row in self.plan.rows(task):
                    yield from circular_rows(row, sources)

        def rows() -> Iterator[dict[str, Any]]:
            with self.plan.image_sources() as sources:
                rendered = self._renderer.rendered(rotations(sources), sources, self.embed_scannet)
                for rotated, images in rendered:
                    yield published_row(rotated, self.plan.info, sources, self.embed_scannet,
                                        images)  # fmt: skip

        log("mmiu publish: circular")
        return batched(rows(), max(256 * 1024, max_bytes // 4))

    def build_info(self, written: list[SplitWritten]) -> dict[str, Any]:
        info = self.plan.info
        return {
            "mode": info.get("mode", "rebuild"),
            "builder_version": info.get("builder_version"),
            "libraries": {"pillow": PIL.__version__, "datasets": datasets.__version__},
            "params": info["config"],
            "params_hash": info["params_hash"],
            "seed": info["seed"],
            "roots": dict(self.plan.roots),
            "counts": info["counts"],
            "skips": info.get("skips", {}),
            "notes": info.get("notes", {}),
            "options": info["options"],
            "shortcuts": self.shortcuts,
            "scannet_images": self.scannet_images,
            "plan_fingerprint": self.shortcuts["plan_fingerprint"],
            **({"ingest": info["ingest"]} if "ingest" in info else {}),
        }

    def card(self, info: dict[str, Any], written: list[SplitWritten]) -> Card:
        from benchsmith.builders.mmiu.card import mmiu_card

        return mmiu_card(info)

    def summary(self, info: dict[str, Any]) -> str:
        items = sum(info["counts"].values())
        return (
            f"mmiu publish: {len(self.tasks)} task configs ({items} items) + circular; "
            f"ScanNet images: {self.scannet_images}"
        )
