"""MMIU's audit hook: rebuild the plan from the recorded sources and compare every column.

Once per audit the plan step runs again into a scratch folder with the recorded config, seed
and source roots; the rows publish would write from it (the publication's own row builder,
with the recorded ScanNet image mode) are the expected rows. Every published row must equal its
expected row in every column: a changed option, answer letter, pose, box, image, image
reference or provenance entry is named with its column. Referenced ScanNet images are
re-rendered in the rebuild, so their sha256 in ``image_refs`` is checked too.

Roots come from ``build_info.json``; ``audit --root scannet=DIR`` or ``--root coco=DIR``
replaces one when the sources moved.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchsmith.builders.audit_report import AuditReport, Digest
from benchsmith.builders.mmiu.features import CIRCULAR_CONFIG
from benchsmith.builders.rebuild_audit import RebuildAuditor
from benchsmith.core.progress import quietly

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

    def id_column(self, config: str) -> str | None:
        return "item_id" if config == CIRCULAR_CONFIG else "id"

    def key_column(self, config: str) -> str:
        return "id"  # a circular row's own id (item/rN); --id takes the item id

    def source_path(self, source: Mapping[str, Any]) -> Path | None:
        if source["file"].endswith(".sens"):
            return None  # one frame of a stream: re-read and re-hashed by the rebuild
        root = self.roots.get(DATASET_ROOTS.get(source["dataset"], source["dataset"]))
        return None if root is None else Path(root) / source["file"]

    def rebuild(self, report: AuditReport) -> dict[str, dict[str, dict[str, Any]]]:
        from benchsmith.builders.mmiu.config import config_from_dict
        from benchsmith.builders.mmiu.plan import MmiuSources, build_mmiu
        from benchsmith.builders.mmiu.plan_dir import MmiuPlanDir
        from benchsmith.builders.mmiu.publication import circular_rows, published_row

        config = config_from_dict(self.info["params"])
        scannet, coco, release = (self.roots.get(k) for k in ("scannet", "coco", "release"))
        sources = MmiuSources(*(Path(r) if r else None for r in (scannet, coco, release)))
        embed = self.info.get("scannet_images") == "embed"
        expected: dict[str, dict[str, dict[str, Any]]] = {}
        with tempfile.TemporaryDirectory(prefix="benchsmith-audit-") as scratch, quietly():
            build_mmiu(config, sources, Path(scratch) / "plan")
            plan = MmiuPlanDir.read(Path(scratch) / "plan")
            with plan.image_sources() as images:
                for task in plan.tasks:
                    for row in plan.rows(task):
                        done = digests(published_row(row, plan.info, images, embed))
                        expected.setdefault(task, {})[row["id"]] = done
                        for rotated in circular_rows(row, images):
                            done = digests(published_row(rotated, plan.info, images, embed))
                            expected.setdefault(CIRCULAR_CONFIG, {})[rotated["id"]] = done
        report.checked("rebuild", "plan re-run from the recorded sources and parameters")
        return expected
