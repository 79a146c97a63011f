"""MULTI's audit hook: re-run the questions and select steps and compare every column.

Once per audit both steps run again into a scratch folder with the recorded config, seed and
roots (``release``: the unzipped release; ``converted``: the OCR step's folder, whose files are
recorded sources checked by sha256: OCR is not re-run, its output is the source). The rows
publish would write from the rebuilt plan are the expected rows; every published row must equal
its expected row in every column, images by their bytes' sha256.

``audit --root release=DIR`` or ``--root converted=DIR`` replaces a root when the sources moved.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchsmith.builders.multi.features import EXTEND
from benchsmith.core.progress import quietly
from benchsmith.core.text_differences import differences, json_values
from benchsmith.family.audit_report import AuditReport, Digest
from benchsmith.family.base import CardRecipe
from benchsmith.family.rebuild_audit import RebuildAuditor

# build_info.json keys the questions and select steps make, which the rebuild makes again
PLAN_COUNTS = ("counts", "source_kinds", "near_duplicates", "selection", "params_hash", "seed")

REMOVED_LOG = "removed.jsonl"  # every question the build removed, with its decision

DATASET_ROOTS = {"multi-release": "release", "multi-converted": "converted"}


def digests(row: dict[str, Any]) -> dict[str, Any]:
    from benchsmith.core.hashing import sha256_bytes

    return {**row, "images": [{**i, "bytes": Digest(sha256_bytes(i["bytes"]))}
                              for i in row["images"]]}  # fmt: skip


class MultiAuditor(RebuildAuditor):
    moved_hint = "pass --root release=DIR or --root converted=DIR if they moved"

    removed_log: bytes | None = None  # the decision log the rebuild wrote

    def check_whole(self, report: AuditReport) -> None:
        """Every rebuilt row published, and ``removed.jsonl`` (the questions the build
        removed, each with its decision) the one the rebuild writes."""
        super().check_whole(report)
        if self.removed_log is None:
            return
        path = self.dataset_dir / REMOVED_LOG
        found = path.read_bytes() if path.is_file() else None
        if found is None:
            report.fail("the decision log is missing", path=REMOVED_LOG)
        elif found != self.removed_log:
            text = found.decode("utf-8", errors="replace")
            for where, said, rebuilt in differences(REMOVED_LOG, text, self.removed_log.decode()):
                report.fail(
                    f"says {said}, the rebuild wrote {rebuilt}", path=f"{REMOVED_LOG}: {where}"
                )
        else:
            report.checked("decisions", "decision log(s) equal the rebuild's")

    def card_recipe(self) -> CardRecipe:
        from benchsmith.builders.multi.card import multi_card
        from benchsmith.builders.multi.publication import MultiPublication

        return CardRecipe.of(MultiPublication, lambda info, written: multi_card(info))

    def id_column(self, config: str) -> str | None:
        return "knowledge_key" if config == EXTEND else "question_id"

    def source_path(self, source: Mapping[str, Any]) -> Path | None:
        root = self.roots.get(DATASET_ROOTS.get(source["dataset"], ""))
        return None if root is None else Path(root) / source["file"]

    def rebuild(self, report: AuditReport) -> dict[str, dict[str, dict[str, Any]]]:
        from benchsmith.builders.multi.config import config_from_dict
        from benchsmith.builders.multi.plan import (
            MultiSources,
            QuestionsDir,
            build_questions,
            select_questions,
        )
        from benchsmith.builders.multi.publication import expected_rows

        config = config_from_dict({**self.info["params"], "seed": self.info["seed"]})
        release, converted = (self.roots.get(k) for k in ("release", "converted"))
        sources = MultiSources(Path(release) if release else None,
                               Path(converted) if converted else None)  # fmt: skip
        expected: dict[str, dict[str, dict[str, Any]]] = {}
        with tempfile.TemporaryDirectory(prefix="benchsmith-audit-") as scratch, quietly():
            build_questions(config, sources, Path(scratch) / "questions")
            select_questions(Path(scratch) / "questions", config, Path(scratch) / "plan",
                             recorded_elite=self.info.get("elite_ids")
                             if self.info["params"]["elite"]["mode"] == "file" else None)  # fmt: skip
            plan = QuestionsDir.read(Path(scratch) / "plan", "select")
            self.rederived = json_values({
                **{key: plan.info.get(key) for key in PLAN_COUNTS},
                "elite": {k: v for k, v in plan.info["elite"].items() if k != "ids"},
                "elite_ids": plan.info["elite"].get("ids", []),
            })  # fmt: skip
            self.removed_log = (Path(scratch) / "plan" / REMOVED_LOG).read_bytes()
            for config_name, row in expected_rows(plan):
                key = row.get("knowledge_key") if config_name == EXTEND else row["question_id"]
                expected.setdefault(config_name, {})[key] = digests(row)
        report.checked("rebuild", "questions and select re-run from the recorded sources")
        return expected
