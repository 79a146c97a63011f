"""The audit of a family whose rows are re-derived by running its build again.

MMIU and MULTI audit the same way: once per audit the build runs again into a scratch folder with
the recorded parameters and sources, giving every row publish would write (the *expected* rows),
and each published row must equal its expected row in every column. What differs per family is
only how to rebuild (:meth:`RebuildAuditor.rebuild`) and which column is a row's id; the
matching, the duplicate and missing-row checks and the build facts that are not re-derivable
(which code and version ran) are written once here.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.family.audit_report import AuditReport
from benchsmith.family.base import RowAuditor


class RebuildAuditor(RowAuditor):
    moved_hint: str = ""  # how to point the audit at sources that moved (--root ...)

    def __init__(self, dataset_dir: Path, info: dict[str, Any], roots: Mapping[str, str]):
        """``roots``: ``--root`` overrides of the source roots ``build_info.json`` recorded."""
        from benchsmith.hf.roots import resolve_roots

        self.dataset_dir = dataset_dir
        self.info = info
        self.roots = resolve_roots(info.get("roots"), dataset_dir, roots)
        self.expected: dict[str, dict[Any, dict[str, Any]]] | None = None
        self._seen: dict[str, set[Any]] = {}

    def key_column(self, config: str) -> str:
        """The column a published row is matched on (its key in :meth:`rebuild`'s rows); the
        ``--id`` column unless a config's ids name several rows (MMIU's circular rotations)."""
        return self.id_column(config) or "id"

    rederived: dict[str, Any] = {}  # build_info.json keys the rebuild gives (set by rebuild)

    def rederived_info(self) -> dict[str, Any]:
        return self.rederived

    @abstractmethod
    def rebuild(self, report: AuditReport) -> dict[str, dict[Any, dict[str, Any]]]:
        """Expected rows per config, keyed by the row id (image bytes as digests)."""

    def check_dataset(self, report: AuditReport) -> None:
        try:
            self.expected = self.rebuild(report)
        except BenchsmithError as exc:
            report.fail(f"cannot rebuild from the recorded sources: {exc} ({self.moved_hint})")

    def audit_row(self, config: str, split: str, row: dict[str, Any], report: AuditReport) -> None:
        if self.expected is None:
            return
        column = self.key_column(config)
        row_id = row[column]
        seen = self._seen.setdefault(config, set())
        if row_id in seen:
            report.fail("appears twice", config=config, row=row_id, column=column)
            return
        expected_rows = self.expected.get(config, {})
        key = self.match(config, split, row_id, expected_rows, seen)
        if key is None:
            report.fail("no row with this id in the rebuild", config=config, row=row_id,
                        column=column)  # fmt: skip
            return
        seen.add(key)
        expected = expected_rows[key]
        report.compare_derived_row(config, row_id, row, expected)

    def met_unchecked(self, config: str, split: str, row: dict[str, Any]) -> None:
        self._seen.setdefault(config, set()).add(row[self.key_column(config)])

    def check_whole(self, report: AuditReport) -> None:
        if self.expected is None:
            return
        for config in self.configs:
            report.unpublished(config, self.expected.get(config, {}),
                               self._seen.get(config, set()), self.key_column(config))  # fmt: skip
