"""The audit hook of a curated dataset: its decisions, and that each row is its source row.

Once per audit: the decision log must be the one the build wrote (sha256 in
``build_info.json``), the source parquet files must be unchanged, and configs copied for their
images (MMNeedle's haystacks) must be byte copies of the source's shards. Each kept row is then
re-derived from its source row and its decisions (:func:`~benchsmith.curate.publication.
curated_row`: the source row unchanged, difficulty and n_correct from its difficulty decision,
provenance extended with the decisions and the source row's digest) and compared column by
column, and no decision may have dropped it. An ``--id`` of a sample curation dropped is
explained by its decisions (the stage and reason that removed it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from benchsmith.core.hashing import sha256_file
from benchsmith.curate.publication import DECISIONS_FILE, curated_row, difficulty_of
from benchsmith.family.audit_report import AuditReport
from benchsmith.family.base import CardRecipe, RowAuditor
from benchsmith.hf.reader import iter_row_batches, split_files

DECISION_FIELDS = ("stage", "action", "reason", "evidence")


class CuratedAuditor(RowAuditor):
    def __init__(self, dataset_dir: Path, info: dict[str, Any], roots: Mapping[str, str]):
        self.dataset_dir = dataset_dir
        self.info = info
        source = info["source"]
        self.source_dir = Path(roots["source"])  # resolved by the audit (publish/roots.py)
        self.config, self.split = source["config"], source["split"]
        self.id_name = source["columns"]["id"]
        self._logged: dict[str, list[dict[str, str]]] | None = None
        self._log_ids: frozenset[str] | None = None
        self._kept: dict[str, None] = {}  # kept sample ids, in dataset order
        self._seen: set[str] = set()
        self._stream: Iterator[dict[str, Any]] | None = None
        self._view: Any = None

    def card_recipe(self) -> CardRecipe:
        from benchsmith.curate.publication import CuratedPublication, curated_card

        return CardRecipe.of(CuratedPublication,
                             lambda info, written: curated_card(info, written, self.source_dir))  # fmt: skip

    def audits_rows(self, config: str) -> bool:
        # a whole audit checks copied configs shard by shard (check_dataset); an audit by id
        # compares the copied rows with those ids to the source's
        return config == self.config or (not self.whole and config in self.joined)

    def id_column(self, config: str) -> str | None:
        return self.id_name if config == self.config else self.join_key

    @property
    def joined(self) -> list[str]:
        return list(self.info["source"].get("joined_configs") or [])

    @property
    def join_key(self) -> str | None:
        return (self.info["source"]["columns"].get("image_join") or {}).get("key")

    def check_dataset(self, report: AuditReport) -> None:
        log_path = self.dataset_dir / DECISIONS_FILE
        if not log_path.is_file() or sha256_file(log_path) != self.info["decisions_sha256"]:
            report.fail("decision log missing or changed since the build", path=log_path)
        else:
            self._logged = {}
            for row in pq.read_table(log_path).to_pylist():
                entry = {k: row[k] or "" for k in DECISION_FIELDS}
                self._logged.setdefault(row["sample_id"], []).append(entry)
            self._kept = {
                sid: None
                for sid, logged in self._logged.items()
                if not any(d["action"] == "drop" for d in logged)
            }
        intact = all(
            self.files.verify(self.source_dir / relative, digest, report)
            for relative, digest in self.info["source"]["files"].items()
        )
        if intact:
            from benchsmith.curate.kind import CURATED
            from benchsmith.hf.dataset_view import DatasetView

            columns = CURATED.columns(self.info)
            self._view = DatasetView(self.source_dir, self.config, self.split, columns)
        for config in self.joined:
            for split in self.info["configs"].get(config, {}):
                ours = split_files(self.dataset_dir, config, split)
                theirs = split_files(self.source_dir, config, split)
                if [sha256_file(p) for p in ours] != [sha256_file(p) for p in theirs]:
                    report.fail(
                        "copied image config differs from the source's shards",
                        config=config,
                        path=self.dataset_dir / "data" / config,
                    )
                    self._compare_copied(config, split, report)
                else:
                    report.checked("copied", f"config(s) equal to the source's ({config})")

    def _compare_copied(self, config: str, split: str, report: AuditReport) -> None:
        """Name the rows and columns of a copied config that differ from the source's."""
        join = self.join_key
        ours = (r for _, rows in iter_row_batches(self.dataset_dir, config, split) for r in rows)
        theirs = (r for _, rows in iter_row_batches(self.source_dir, config, split) for r in rows)
        for index, (mine, source) in enumerate(zip(ours, theirs, strict=False)):
            row_id = str(source.get(join, index)) if join else str(index)
            report.compare_row(config, row_id, mine, source)

    def _source_row(self, row_id: str) -> dict[str, Any] | None:
        """The source row with this id: streamed in order (published rows are a subsequence
        of the source split), or looked up with a filter when the stream has passed it."""
        if self.whole:
            if self._stream is None:
                self._stream = (
                    row
                    for _, rows in iter_row_batches(self.source_dir, self.config, self.split)
                    for row in rows
                )
            for row in self._stream:
                if str(row[self.id_name]) == row_id:
                    return row
            self._stream = iter(())
        dataset = pads.dataset([str(p) for p in self._view.files], format="parquet")
        wanted = pads.field(self.id_name).cast(pa.string()) == row_id
        rows = dataset.to_table(filter=wanted).to_pylist()
        return rows[0] if len(rows) == 1 else None

    def _audit_copied_row(
        self, config: str, split: str, row: dict[str, Any], report: AuditReport
    ) -> None:
        """A row of a copied image config, by id: equal to the source's row with that key."""
        row_id = str(row[self.join_key])
        files = split_files(self.source_dir, config, split)
        wanted = pads.field(self.join_key).cast(pa.string()) == row_id
        table = pads.dataset([str(p) for p in files], format="parquet").to_table(filter=wanted)
        rows = table.to_pylist()
        if len(rows) != 1:
            report.fail("not in the source's copy of this config", config=config, row=row_id)
            return
        report.compare_row(config, row_id, row, rows[0])

    def audit_row(self, config: str, split: str, row: dict[str, Any], report: AuditReport) -> None:
        if config != self.config:
            self._audit_copied_row(config, split, row, report)
            return
        row_id = str(row[self.id_name])
        if self._logged is None or self._view is None:
            return  # the decision log or the source failed its check (reported once)
        key = row_id if row_id in self._logged else None
        if key is None:
            key = self.match(config, split, row_id, self._kept, self._seen)
        if key is None:
            report.fail("not in the decision log", config=config, row=row_id, column=self.id_name)
            return
        self._seen.add(key)
        logged = self._logged[key]
        if any(d["action"] == "drop" for d in logged):
            report.fail("was dropped but is in the published rows", config=config, row=row_id)
        source = self._source_row(key)
        if source is None:
            report.fail("source row not found", config=config, row=row_id, path=self.source_dir)
            return
        expected = curated_row(
            source,
            self._view,
            logged,
            difficulty_of(logged),
            self.info["params_hash"],
            int(self.info["seed"]),
        )
        if not source.get("provenance"):  # a fresh provenance: its build facts are recorded
            for fact in ("code_revision", "builder_version"):
                expected["provenance"][fact] = row["provenance"].get(fact)
        report.compare_row(config, row_id, row, expected)

    def check_whole(self, report: AuditReport) -> None:
        """Every sample the decision log keeps is published (a row deleted with its shard
        renamed and build_info updated is named here, whatever the card and Croissant say)."""
        if self._logged is None or self._view is None or self.config not in self.configs:
            return  # the log or the source failed its check (reported once)
        missing = [sid for sid in self._kept if sid not in self._seen]
        for sample_id in missing[:5]:
            report.fail("kept sample is missing from the published rows", config=self.config,
                        row=sample_id)  # fmt: skip
        if len(missing) > 5:
            report.fail(f"{len(missing) - 5} more kept sample(s) are missing", config=self.config)
        if not missing:
            report.checked("rows", "kept sample(s) of the decision log published")

    def may_explain_unpublished(self, row_id: str) -> bool:
        """The id is a sample of the decision log (read here as it is: its hash is checked by
        :meth:`check_dataset`); a log that does not read explains nothing yet, and may later."""
        if self._log_ids is None:
            try:
                log = pq.read_table(self.dataset_dir / DECISIONS_FILE, columns=["sample_id"])
                self._log_ids = frozenset(str(v) for v in log.column(0).to_pylist())
            except (pa.ArrowException, OSError, KeyError):
                return True  # the audit itself reports what is wrong with the log
        return row_id in self._log_ids

    def unpublished_id(self, row_id: str, report: AuditReport) -> bool:
        logged = (self._logged or {}).get(row_id)
        if not logged or self.config not in self.configs:
            return False  # (a sample's decisions explain nothing about a copied image config)
        report.decisions += [{**d, "stage": f"curate/{d['stage']}"} for d in logged]
        if not any(d["action"] == "drop" for d in logged):
            report.fail("kept sample is missing from the published rows", row=row_id)
        return True
