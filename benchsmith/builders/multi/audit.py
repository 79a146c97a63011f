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

from benchsmith.builders.audit_report import AuditReport, Digest
from benchsmith.builders.multi.features import EXTEND
from benchsmith.builders.rebuild_audit import RebuildAuditor
from benchsmith.core.progress import quietly

DATASET_ROOTS = {"multi-release": "release", "multi-converted": "converted"}


def digests(row: dict[str, Any]) -> dict[str, Any]:
    from benchsmith.core.hashing import sha256_bytes

    return {**row, "images": [{**i, "bytes": Digest(sha256_bytes(i["bytes"]))}
                              for i in row["images"]]}  # fmt: skip


class MultiAuditor(RebuildAuditor):
    moved_hint = "pass --root release=DIR or --root converted=DIR if they moved"

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
            for config_name, row in expected_rows(plan):
                key = row.get("knowledge_key") if config_name == EXTEND else row["question_id"]
                expected.setdefault(config_name, {})[key] = digests(row)
        report.checked("rebuild", "questions and select re-run from the recorded sources")
        return expected
