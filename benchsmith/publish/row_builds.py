"""Which code built the rows: ``build_info.json``'s ``rows_built_by``, recounted by the audit.

A row's ``provenance.code_revision`` and ``provenance.builder_version`` say which code made it;
they are facts of the build, which no re-derivation can reproduce (the audit may run newer
code). What the audit can hold them to is the publisher's own count: ``rows_built_by`` lists
each (code revision, version) the rows carry with its number of rows, and a whole audit counts
again. A row whose revision was edited is then named, and so is a count that does not add up.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from benchsmith.family.audit_report import AuditReport
from benchsmith.hf.layout import SplitWritten

FACTS = ("code_revision", "builder_version")
KEY = "rows_built_by"
NAMED_ROWS = 5  # rows named per unrecorded build (a forged revision usually repeats)

Build = tuple[str | None, str | None]


def build_of(provenance: Mapping[str, Any] | None) -> Build:
    """A row's (code revision, version), from its provenance."""
    provenance = provenance or {}
    return provenance.get("code_revision"), provenance.get("builder_version")


def rows_built_by(counts: Mapping[Build, int]) -> list[dict[str, Any]]:
    """``build_info.json``'s record of the counts, in one order."""
    return [{"code_revision": revision, "builder_version": version, "rows": n}
            for (revision, version), n in sorted(counts.items(), key=str)]  # fmt: skip


def count_builds(folder: Path, written: Iterable[SplitWritten]) -> list[dict[str, Any]]:
    """What the publisher records: the builds of every row in the shards just written (only
    the two provenance fields are read)."""
    counts: Counter[Build] = Counter()
    for split in written:
        for name in split.files:
            shard = pq.ParquetFile(folder / name)
            if "provenance" not in shard.schema_arrow.names:
                continue
            columns = [f"provenance.{fact}" for fact in FACTS]
            for row in shard.read(columns=columns).column("provenance").to_pylist():
                counts[build_of(row)] += 1
    return rows_built_by(counts)


class BuildTally:
    """The audit's recount, one row at a time, and its comparison with the record."""

    def __init__(self, recorded: list[dict[str, Any]] | None):
        self.recorded = recorded
        self.known = {(r.get("code_revision"), r.get("builder_version")) for r in recorded or []}
        self.counts: Counter[Build] = Counter()
        self.unknown: dict[Build, list[tuple[str, Any]]] = {}

    def add(self, config: str, row_id: Any, provenance: Mapping[str, Any] | None) -> None:
        build = build_of(provenance)
        self.counts[build] += 1
        if self.recorded is not None and build not in self.known:
            self.unknown.setdefault(build, []).append((config, row_id))

    def add_recorded(self, counted: list[dict[str, Any]]) -> None:
        """Rows the audit does not read one by one (configs copied whole), counted by shard."""
        for entry in counted:
            self.counts[(entry["code_revision"], entry["builder_version"])] += entry["rows"]

    def report(self, report: AuditReport) -> None:
        """After a whole audit: each row of an unrecorded build named (the first few), then
        the counts against the record."""
        if self.recorded is None:
            return  # published before the record existed: nothing to hold the rows to
        for (revision, version), rows in self.unknown.items():
            for config, row_id in rows[:NAMED_ROWS]:
                report.fail(f"provenance says code revision {revision!r} (version {version!r}), "
                            f"which build_info.json's {KEY} does not list", config=config,
                            row=row_id, column="provenance")  # fmt: skip
        if rows_built_by(self.counts) != self.recorded:
            report.fail(f"says {self.recorded}, the rows carry {rows_built_by(self.counts)}",
                        path=f"build_info.json: {KEY}")  # fmt: skip
        elif not self.unknown:
            report.checked(
                "builds",
                "row(s) built by the code build_info.json's rows_built_by records",
                sum(self.counts.values()),
            )
