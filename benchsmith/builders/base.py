"""The family interface: everything one benchmark family gives the shared layers.

A family (MMNeedle, VL-ICL, ...) is one folder ``builders/<family>/`` and one :class:`Family`
object in it, listed once in :data:`benchsmith.builders.FAMILIES`. The shared layers reach a
family only through that object:

- the CLI builds ``benchsmith build FAMILY STEP`` from :attr:`Family.steps` and
  ``benchsmith publish FAMILY`` from :meth:`Family.add_publish_arguments`;
- the one publisher (:func:`benchsmith.publish.publisher.publish`) writes what
  :meth:`Family.publication` describes: the configs and splits (features + a batch iterator),
  the family's part of ``build_info.json`` and its card;
- the one audit (:func:`benchsmith.publish.audit.audit_dataset`) verifies every source file
  once and asks :meth:`Family.auditor` to re-derive each row;
- ``curate`` and ``predict`` read a published folder with :meth:`Family.columns`, and
  ``score`` finds the family's scorer under the same name in ``SCORERS``.

Curated datasets are published and audited through the same :class:`Publication` and
:class:`RowAuditor` interfaces (``benchsmith.curate``), without being a benchmark family.
"""

from __future__ import annotations

import argparse
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

if TYPE_CHECKING:  # the heavy modules load only when a command needs them
    import datasets

    from benchsmith.hf.dataset_view import ColumnMap
    from benchsmith.hf.layout import SplitWritten

Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class Step:
    """One build step, ``benchsmith build FAMILY STEP``: its help, its flags and what it runs."""

    name: str
    help: str
    description: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class ConfigSpec:
    """One config a publication writes: its features and, per split, its rows in batches.

    ``batches(split, max_shard_bytes)`` yields lists of rows; each list becomes one parquet row
    group, so a family that sizes batches by bytes gets the shard size it must respect.
    """

    name: str
    features: datasets.Features
    splits: tuple[str, ...]
    batches: Callable[[str, int], Iterable[Rows]]


@dataclass(frozen=True)
class CopiedConfig:
    """A config copied shard by shard from another folder (curation keeps joined images)."""

    written: SplitWritten
    features: datasets.Features


@dataclass(frozen=True)
class Card:
    """The family's part of a dataset card: YAML metadata, template context, default config."""

    metadata: dict[str, Any]
    context: dict[str, Any]
    default_config: str | None = None


class Publication(ABC):
    """What one publish run writes; the publisher stages the folder, shards, info and card."""

    family: str  # build_info["family"]
    card_template: str  # file name in cards/

    @abstractmethod
    def configs(self) -> Iterable[ConfigSpec]:
        """Configs in the order they are written."""

    def copy_configs(self, staging: Path) -> list[CopiedConfig]:
        """Configs written by copying files into ``staging`` (none by default)."""
        return []

    def write_extra(self, staging: Path) -> dict[str, Any]:
        """Files besides the configs (e.g. a decision log); returns build_info additions."""
        return {}

    @abstractmethod
    def build_info(self, written: list[SplitWritten]) -> dict[str, Any]:
        """The family's part of ``build_info.json`` (params, sources, QA, counts)."""

    @abstractmethod
    def card(self, info: dict[str, Any], written: list[SplitWritten]) -> Card:
        """Card metadata and template context, from the finished ``build_info``."""

    def summary(self, info: dict[str, Any]) -> str:
        """One status line for the log once the folder is in place."""
        return f"{self.family} publish: {len(info['configs'])} configs"


def _short(value: Any, limit: int = 80) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class AuditReport:
    """What an audit checked and every difference it found."""

    subject: str
    rows_checked: int = 0
    failures: list[str] = field(default_factory=list)
    decisions: list[dict[str, str]] = field(default_factory=list)
    sources_verified: set[str] = field(default_factory=set)
    checks: Counter = field(default_factory=Counter)  # (kind, what) -> count

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

    def checked(self, kind: str, what: str, count: int = 1) -> None:
        """Count a check that passed, e.g. ``checked("images", "re-rendered byte-identical")``."""
        self.checks[(kind, what)] += count

    def count(self, kind: str, what: str) -> int:
        return self.checks[(kind, what)]

    def render(self) -> str:
        """Verdict line, what was checked, then failures and the rows' decisions."""
        lines = [f"audit {self.subject}: {'OK' if self.ok else 'FAILED'}"]
        lines.append(f"  {'rows':<9} {self.rows_checked} row(s) checked")
        lines.append(
            f"  {'sources':<9} {len(self.sources_verified)} file(s) match their recorded sha256"
        )
        for (kind, what), n in sorted(self.checks.items()):
            lines.append(f"  {kind:<9} {n} {what}")
        lines += [f"  FAIL      {f}" for f in self.failures]
        lines += [
            f"  decision  {d['stage']}: {d['action']} {d['reason']} {d['evidence']}"
            for d in self.decisions
        ]
        return "\n".join(lines)


class RowAuditor(ABC):
    """Re-derives the published rows of one dataset from their recorded sources.

    The one audit calls :meth:`check_dataset` once, then for every row it selected verifies the
    row's provenance sources (each file hashed once, through :meth:`source_path`) and calls
    :meth:`audit_row`; a whole-dataset audit ends with :meth:`check_whole`. A row whose own
    source files differ is not re-derived (the changed file is the finding).

    ``files`` is set by the audit before any check: ``files.verify(path, sha256, report)``
    hashes a file once per audit, for sources a hook reaches itself (a sample's haystack).
    """

    files: Any = None

    def id_column(self, config: str) -> str | None:
        """Column whose value is a row's ``--id`` (None: rows of this config have no id)."""
        return "id"

    def audits_rows(self, config: str) -> bool:
        """False for a config checked as a whole in :meth:`check_dataset` (its rows are not
        read one by one)."""
        return True

    def source_path(self, source: Mapping[str, Any]) -> Path | None:
        """Where a provenance source file is on this machine; None when it is not a file the
        audit should hash (rendered, or checked by :meth:`audit_row` itself)."""
        return None

    def check_dataset(self, report: AuditReport) -> None:
        """Checks that hold for the whole folder (run once, before any row); none by default."""
        return None

    @abstractmethod
    def audit_row(self, config: str, split: str, row: dict[str, Any], report: AuditReport) -> None:
        """Re-derive one row and report every difference (``report.fail``)."""

    def check_whole(self, report: AuditReport) -> None:
        """Cross-row checks of a whole-dataset audit (run after every row); none by default."""
        return None

    def unpublished_id(self, row_id: str, report: AuditReport) -> bool:
        """Explain an ``--id`` that no published row has (e.g. a sample curation dropped);
        False when the id is unknown."""
        return False


class DatasetKind(Protocol):
    """What reading, auditing and scoring a published folder needs: every :class:`Family`,
    and the curated datasets of :mod:`benchsmith.curate`."""

    name: str
    root_names: tuple[str, ...]
    audit_help: str  # what `audit` re-derives for it and what its --id values are

    def auditor(
        self, dataset_dir: Path, info: dict[str, Any], roots: Mapping[str, str]
    ) -> RowAuditor: ...

    def columns(self, info: dict[str, Any]) -> ColumnMap: ...


class Family(ABC):
    """One benchmark family; each is a singleton listed in ``FAMILIES``."""

    name: ClassVar[str]
    title: ClassVar[str]
    summary: ClassVar[str]  # one line for `benchsmith build --help`
    steps: ClassVar[tuple[Step, ...]] = ()
    root_names: ClassVar[tuple[str, ...]] = ()  # what `audit --root NAME=DIR` accepts
    audit_help: ClassVar[str] = ""  # what `audit` re-derives, and what --id names

    @abstractmethod
    def add_publish_arguments(self, parser: argparse.ArgumentParser) -> None:
        """Flags of ``benchsmith publish FAMILY`` (inputs; --out, --version and the shard size
        are added by the CLI)."""

    @abstractmethod
    def publication(self, args: argparse.Namespace) -> Publication:
        """Read the built inputs named by the parsed publish flags."""

    @abstractmethod
    def auditor(
        self, dataset_dir: Path, info: dict[str, Any], roots: Mapping[str, str]
    ) -> RowAuditor:
        """The audit hook for one published folder; ``roots`` override recorded source roots."""

    @abstractmethod
    def columns(self, info: dict[str, Any]) -> ColumnMap:
        """Which columns hold the id, question, answer and images (for curate and predict)."""

    def default_out(self, params: dict[str, Any]) -> Path:
        """Where ``publish`` writes by default: ``<family>.publish.out`` or ``published/<family>``."""
        section = params.get(self.name) if isinstance(params.get(self.name), dict) else {}
        publish = section.get("publish") if isinstance(section.get("publish"), dict) else {}
        return Path(publish.get("out") or f"published/{self.name}")
