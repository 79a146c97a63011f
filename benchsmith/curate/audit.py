"""The audit hook of a curated dataset: its decisions, and that each row is its source row.

Once per audit: the decision log must be the one the build wrote (sha256 in
``build_info.json``), the source parquet files must be unchanged, and configs copied for their
images (MMNeedle's haystacks) must be byte copies of the source's shards. Per kept row: its
provenance carries exactly its decisions from ``decisions.parquet``, no decision dropped it,
and the source row still has the digest recorded in its provenance. An ``--id`` of a sample
curation dropped is explained by its decisions (the stage and reason that removed it).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from benchsmith.builders.base import AuditReport, RowAuditor
from benchsmith.core.hashing import sha256_file
from benchsmith.curate.publication import DECISIONS_FILE
from benchsmith.hf.dataset_view import row_digest
from benchsmith.hf.reader import iter_row_batches, split_files

DECISION_FIELDS = ("stage", "action", "reason", "evidence")


class CuratedAuditor(RowAuditor):
    def __init__(self, dataset_dir: Path, info: dict[str, Any], roots: Mapping[str, str]):
        self.dataset_dir = dataset_dir
        self.info = info
        source = info["source"]
        self.source_dir = Path(roots.get("source") or source["dataset_dir"])
        self.config, self.split = source["config"], source["split"]
        self.id_name = source["columns"]["id"]
        self._logged: dict[str, list[dict[str, str]]] | None = None
        self._digests: dict[str, str] | None = None

    def audits_rows(self, config: str) -> bool:
        return config == self.config  # copied configs are checked shard by shard

    def id_column(self, config: str) -> str | None:
        return self.id_name if config == self.config else None

    def check_dataset(self, report: AuditReport) -> None:
        log_path = self.dataset_dir / DECISIONS_FILE
        if not log_path.is_file() or sha256_file(log_path) != self.info["decisions_sha256"]:
            report.fail("decision log missing or changed since the build", path=log_path)
        else:
            self._logged = {}
            for row in pq.read_table(log_path).to_pylist():
                entry = {k: row[k] or "" for k in DECISION_FIELDS}
                self._logged.setdefault(row["sample_id"], []).append(entry)
        for relative, digest in self.info["source"]["files"].items():
            self.files.verify(self.source_dir / relative, digest, report)
        for config in self.info["source"].get("joined_configs") or []:
            for split in self.info["configs"].get(config, {}):
                ours = split_files(self.dataset_dir, config, split)
                theirs = split_files(self.source_dir, config, split)
                if [sha256_file(p) for p in ours] != [sha256_file(p) for p in theirs]:
                    report.fail(
                        "copied image config differs from the source's shards",
                        config=config,
                        path=self.dataset_dir / "data" / config,
                    )
                else:
                    report.checked("copied", f"config(s) equal to the source's ({config})")

    def _source_digests(self) -> dict[str, str]:
        """id -> row digest of every source row (streamed; only the digests are kept)."""
        if self._digests is None:
            self._digests = {}
            for _, rows in iter_row_batches(self.source_dir, self.config, self.split):
                for row in rows:
                    self._digests[str(row[self.id_name])] = row_digest(row)
        return self._digests

    def audit_row(self, config: str, split: str, row: dict[str, Any], report: AuditReport) -> None:
        row_id = str(row[self.id_name])
        if self._logged is None:
            return  # the decision log itself failed its check (reported once)
        logged = self._logged.get(row_id)
        if not logged:
            report.fail("not in the decision log", config=config, row=row_id, path=DECISIONS_FILE)
            return
        if any(d["action"] == "drop" for d in logged):
            report.fail("was dropped but is in the published rows", config=config, row=row_id)
        curated = [d for d in row["provenance"]["decisions"] if d["stage"].startswith("curate/")]
        expected = [f"curate/{d['stage']}:{d['action']}:{d['reason']}" for d in logged]
        found = [f"{d['stage']}:{d['action']}:{d['reason']}" for d in curated]
        if expected != found:
            report.fail(
                f"provenance decisions differ from {DECISIONS_FILE}",
                config=config,
                row=row_id,
                column="provenance",
                published=found,
                derived=expected,
            )
        recorded = row["provenance"]["sources"][-1]["sha256"]
        actual = self._source_digests().get(row_id)
        if actual is None:
            report.fail("source row not found", config=config, row=row_id, path=self.source_dir)
        elif actual != recorded:
            report.fail(
                f"source row changed (digest {actual[:12]} != recorded {recorded[:12]})",
                config=config,
                row=row_id,
                path=self.source_dir,
            )
        else:
            report.checked("rows", "source row(s) unchanged since curation")

    def unpublished_id(self, row_id: str, report: AuditReport) -> bool:
        logged = (self._logged or {}).get(row_id)
        if not logged:
            return False
        report.decisions += [{**d, "stage": f"curate/{d['stage']}"} for d in logged]
        if not any(d["action"] == "drop" for d in logged):
            report.fail("kept sample is missing from the published rows", row=row_id)
        return True
