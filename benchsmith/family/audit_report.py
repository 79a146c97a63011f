"""What an audit found: checks that passed, and every difference, column by column.

A family's audit hook re-derives a published row from its recorded sources and parameters and
hands both to :meth:`AuditReport.compare_row`, which compares every column (nested values
included) and names the config, the row, the column, the path inside it, the published value
and the re-derived one. Image payloads may be re-derived as a :class:`Digest` (their sha256)
rather than bytes, so a whole-dataset audit never holds two copies of every image.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.core.hashing import sha256_bytes

# provenance fields a build records and no re-derivation reproduces (which code and version ran)
BUILD_FACT_FIELDS = ("code_revision", "builder_version")
NAMED_MISSING = 5  # unpublished re-derived rows named per config; the rest are counted


@dataclass(frozen=True)
class Digest:
    """Re-derived bytes, known by their sha256 (matches published bytes with that hash)."""

    sha256: str


def _short(value: Any, limit: int = 80) -> str:
    if isinstance(value, bytes | bytearray):
        return f"<{len(value)} bytes, sha256 {sha256_bytes(bytes(value))[:12]}>"
    if isinstance(value, Digest):
        return f"<bytes with sha256 {value.sha256[:12]}>"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def first_difference(published: Any, derived: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """``(path, published, derived)`` of the first place the values differ, or None."""
    if isinstance(derived, Digest):
        if (
            isinstance(published, bytes | bytearray)
            and sha256_bytes(bytes(published)) == derived.sha256
        ):
            return None
        return path, published, derived
    if isinstance(derived, Mapping) and isinstance(published, Mapping):
        for key in sorted(set(derived) | set(published), key=str):
            if key not in published or key not in derived:
                return f"{path}.{key}".lstrip("."), published.get(key), derived.get(key)
            found = first_difference(published[key], derived[key], f"{path}.{key}".lstrip("."))
            if found:
                return found
        return None
    if isinstance(derived, list | tuple) and isinstance(published, list | tuple):
        if len(derived) != len(published):
            return f"{path} (length)", len(published), len(derived)
        for index, (a, b) in enumerate(zip(published, derived, strict=True)):
            found = first_difference(a, b, f"{path}[{index}]")
            if found:
                return found
        return None
    if type(published) is not type(derived) and not (
        isinstance(published, int | float) and isinstance(derived, int | float)
    ):
        return path, published, derived
    return None if published == derived else (path, published, derived)


@dataclass
class AuditReport:
    """What an audit checked and every difference it found."""

    subject: str
    rows_checked: int = 0
    failures: list[str] = field(default_factory=list)
    decisions: list[dict[str, str]] = field(default_factory=list)
    sources_verified: set[str] = field(default_factory=set)
    checks: Counter = field(default_factory=Counter)  # (kind, what) -> count
    differing_columns: Counter = field(default_factory=Counter)  # column -> rows that differ
    differing_rows: set[tuple[str, str]] = field(default_factory=set)

    @property
    def ok(self) -> bool:
        return not self.failures

    def fail(
        self,
        problem: str,
        *,
        config: str | None = None,
        row: str | None = None,
        column: str | None = None,
        published: Any = None,
        derived: Any = None,
        path: str | Path | None = None,
    ) -> None:
        """Record one difference: where (config/row [column]), what, and the file involved."""
        if column is not None and row is not None:
            self.differing_columns[column] += 1
            self.differing_rows.add((str(config), str(row)))
        if row is not None and config is not None and str(row).startswith(f"{config}/"):
            config = None  # the row id already names its config (VL-ICL: clevr/query/00003)
        where = "/".join(str(p) for p in (config, row) if p is not None)
        if column:
            where = f"{where} [{column}]" if where else f"[{column}]"
        text = f"{where}: {problem}" if where else problem
        if column and (published is not None or derived is not None):
            text += f" (published {_short(published)}, re-derived {_short(derived)})"
        if path is not None:
            text += f": {path}"
        self.failures.append(text)

    def unpublished(
        self, config: str, derived: Iterable[Any], seen: Iterable[Any], column: str | None
    ) -> None:
        """Every re-derived row of ``config`` the audit did not meet among the published ones:
        the first five named, the rest counted (a deleted config would name thousands)."""
        missing = sorted(set(derived) - set(seen), key=str)
        for row_id in missing[:NAMED_MISSING]:
            self.fail("re-derived row is not published", config=config, row=str(row_id),
                      column=column)  # fmt: skip
        if len(missing) > NAMED_MISSING:
            self.fail(f"{len(missing) - NAMED_MISSING} more re-derived rows are not published",
                      config=config)  # fmt: skip

    def compare_derived_row(
        self, config: str, row_id: str, published: Mapping[str, Any], derived: Mapping[str, Any]
    ) -> bool:
        """:meth:`compare_row` for a row re-derived by a family: the build facts of its
        provenance (:data:`BUILD_FACT_FIELDS`: which code and version ran, which no re-derivation
        reproduces) are taken from the published row; the whole-folder audit holds them to
        ``build_info.json``'s ``rows_built_by``."""
        facts = {k: (published.get("provenance") or {}).get(k) for k in BUILD_FACT_FIELDS}
        derived = {**derived, "provenance": {**derived["provenance"], **facts}}
        return self.compare_row(config, row_id, published, derived)

    def compare_row(
        self,
        config: str,
        row_id: str,
        published: Mapping[str, Any],
        derived: Mapping[str, Any],
        *,
        skip: Iterable[str] = (),
    ) -> bool:
        """Compare every column; each difference names its column and the path inside it.
        ``skip`` names columns compared elsewhere. True when the row matches."""
        skipped = set(skip)
        same = True
        for column in [*published, *(c for c in derived if c not in published)]:
            if column in skipped:
                continue
            if column not in derived:
                self.fail("column is not re-derived", config=config, row=row_id, column=column)
                same = False
                continue
            if column not in published:
                self.fail("column is missing", config=config, row=row_id, column=column)
                same = False
                continue
            found = first_difference(published[column], derived[column])
            if found:
                inner, a, b = found
                where = (
                    f" at {column}{inner if inner.startswith('[') else '.' + inner}"
                    if inner
                    else ""
                )
                self.fail(
                    f"differs from the re-derived row{where}",
                    config=config,
                    row=row_id,
                    column=column,
                    published=a,
                    derived=b,
                )
                same = False
        if same:
            self.checked("rows", "row(s) equal their re-derivation in every column")
        return same

    def checked(self, kind: str, what: str, count: int = 1) -> None:
        """Count a check that passed, e.g. ``checked("images", "re-rendered byte-identical")``."""
        self.checks[(kind, what)] += count

    def count(self, kind: str, what: str) -> int:
        return self.checks[(kind, what)]

    def render(self) -> str:
        """Verdict line, what was checked, the differences by column, then each failure."""
        lines = [f"audit {self.subject}: {'OK' if self.ok else 'FAILED'}"]
        lines.append(f"  {'rows':<9} {self.rows_checked} row(s) checked")
        lines.append(
            f"  {'sources':<9} {len(self.sources_verified)} file(s) match their recorded sha256"
        )
        for (kind, what), n in sorted(self.checks.items()):
            lines.append(f"  {kind:<9} {n} {what}")
        if self.differing_rows:
            by_column = ", ".join(f"{c} {n}" for c, n in sorted(self.differing_columns.items()))
            lines.append(f"  {'differ':<9} {len(self.differing_rows)} row(s): {by_column}")
        lines += [f"  FAIL      {f}" for f in self.failures]
        lines += [
            f"  decision  {d['stage']}: {d['action']} {d['reason']} {d['evidence']}"
            for d in self.decisions
        ]
        return "\n".join(lines)
