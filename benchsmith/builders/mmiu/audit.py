"""MMIU's audit hook: rebuild the plan from the recorded sources and compare every column.

Once per audit the plan step runs again into a scratch folder with the recorded config, seed
and source roots; the rows publish would write from it (the publication's own row builder,
with the recorded ScanNet image mode) are the expected rows. Every published row must equal its
expected row in every column: a changed option, answer letter, pose, box, image, image
reference or provenance entry is named with its column. Referenced ScanNet images are
re-rendered in the rebuild, so their sha256 in ``image_refs`` is checked too. An audit by
``--id`` re-plans everything but renders only the rows it reads.

Roots come from ``build_info.json``; ``audit --root scannet=DIR`` or ``--root coco=DIR``
replaces one when the sources moved.
"""

from __future__ import annotations

import tempfile
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

from benchsmith.builders.mmiu.features import CIRCULAR_CONFIG
from benchsmith.core.progress import quietly
from benchsmith.core.text_differences import json_values
from benchsmith.family.audit_report import AuditReport, Digest
from benchsmith.family.base import CardRecipe
from benchsmith.family.rebuild_audit import RebuildAuditor

# build_info.json keys the plan makes, which the rebuild makes again
PLAN_COUNTS = ("counts", "skips", "notes", "options", "params_hash", "seed")

DATASET_ROOTS = {"scannet": "scannet", "coco": "coco", "mmiu-release": "release"}


def digests(row: dict[str, Any]) -> dict[str, Any]:
    from benchsmith.core.hashing import sha256_bytes

    images = [
        None if image is None else {**image, "bytes": Digest(sha256_bytes(image["bytes"]))}
        for image in row["images"]
    ]
    return {**row, "images": images}


class MmiuAuditor(RebuildAuditor):
    moved_hint = "pass --root scannet=DIR or --root coco=DIR if they moved"

    def card_recipe(self) -> CardRecipe:
        from benchsmith.builders.mmiu.card import mmiu_card
        from benchsmith.builders.mmiu.publication import MmiuPublication

        # a rehydrated copy is carded as the build it copies (RehydratedPublication)
        return CardRecipe.of(MmiuPublication, lambda info, written: mmiu_card(info))

    def id_column(self, config: str) -> str | None:
        return "item_id" if config == CIRCULAR_CONFIG else "id"

    def key_column(self, config: str) -> str:
        return "id"  # a circular row's own id (item/rN); --id takes the item id

    def source_path(self, source: Mapping[str, Any]) -> Path | None:
        if source["file"].endswith(".sens"):
            return None  # one frame of a stream: re-read and re-hashed by the rebuild
        root = self.roots.get(DATASET_ROOTS.get(source["dataset"], source["dataset"]))
        return None if root is None else Path(root) / source["file"]

    def rebuild(self, report: AuditReport) -> dict[str, Mapping[str, dict[str, Any]]]:
        from benchsmith.builders.mmiu.config import config_from_dict
        from benchsmith.builders.mmiu.plan import MmiuSources, build_mmiu
        from benchsmith.builders.mmiu.plan_dir import MmiuPlanDir
        from benchsmith.builders.mmiu.publication import (
            published_row,
            published_task_order,
            rotations,
            with_image_hashes,
        )

        config = config_from_dict(self.info["params"])
        scannet, coco, release = (self.roots.get(k) for k in ("scannet", "coco", "release"))
        sources = MmiuSources(*(Path(r) if r else None for r in (scannet, coco, release)))
        embed = self.info.get("scannet_images") == "embed"
        scratch = ExitStack()
        try:
            folder = Path(
                scratch.enter_context(tempfile.TemporaryDirectory(prefix="benchsmith-audit-"))
            )
            with quietly():
                build_mmiu(config, sources, folder / "plan")
            plan = MmiuPlanDir.read(folder / "plan")
            self.rederived = json_values({key: plan.info.get(key, {}) for key in PLAN_COUNTS})
            images = scratch.enter_context(plan.image_sources())
        except BaseException:
            scratch.close()  # a failed rebuild leaves no scratch folder behind
            raise

        def item(row: dict[str, Any]) -> dict[str, Any]:
            return digests(published_row(row, plan.info, images, embed))

        def rotated_item(rotated: dict[str, Any]) -> dict[str, Any]:
            return item(with_image_hashes(rotated, images))

        makers: dict[str, dict[str, Callable[[], dict[str, Any]]]] = {}
        for task in published_task_order(plan):
            for row in plan.rows(task):
                makers.setdefault(task, {})[row["id"]] = partial(item, row)
                for rotated in rotations(row):
                    makers.setdefault(CIRCULAR_CONFIG, {})[rotated["id"]] = partial(
                        rotated_item, rotated
                    )
        report.checked("rebuild", "plan re-run from the recorded sources and parameters")
        if self.ids is None:  # every row is compared: render them all now, then let go
            with scratch, quietly():
                return {
                    c: {key: make() for key, make in rows.items()} for c, rows in makers.items()
                }
        # An audit by id: every row's id and place are known (a changed id is still matched by
        # position), but only the rows the audit reads are rendered, when it reads them.
        weakref.finalize(self, scratch.close)  # the scratch plan lives as long as the auditor
        return {config: RowsOnDemand(rows) for config, rows in makers.items()}


class RowsOnDemand(Mapping):
    """Expected rows keyed by id, each made the first time it is read."""

    def __init__(self, makers: dict[str, Callable[[], dict[str, Any]]]):
        self._makers, self._made = makers, {}

    def __getitem__(self, key: str) -> dict[str, Any]:
        if key not in self._made:
            with quietly():
                self._made[key] = self._makers[key]()
        return self._made[key]

    def __contains__(self, key: object) -> bool:  # Mapping's would make the row to find it
        return key in self._makers

    def __iter__(self) -> Iterator[str]:
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)
