"""The family interface: everything one benchmark family gives the shared layers.

A family (MMNeedle, VL-ICL, ...) is one folder ``builders/<family>/`` and one :class:`Family`
object in it, listed once in :data:`benchsmith.builders.FAMILIES`. The shared layers reach a
family only through that object:

- the CLI builds ``benchsmith build FAMILY STEP`` from :attr:`Family.steps` and
  ``benchsmith publish FAMILY`` from :attr:`Family.publish_inputs` and
  :attr:`Family.publish_settings`: dataclasses whose declared fields are the flags, so a
  family gets filled-in objects, never an ``argparse.Namespace``;
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

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from benchsmith.family.audit_report import AuditReport
from benchsmith.family.publish_settings import PublishSettings

if TYPE_CHECKING:  # the heavy modules load only when a command needs them
    import datasets

    from benchsmith.family.report_table import ReportTable
    from benchsmith.family.requests import (
        HarnessRow,
        PredictionRequest,
        PredictOptions,
        RequestSource,
    )
    from benchsmith.hf.dataset_view import ColumnMap
    from benchsmith.hf.layout import SplitWritten

if TYPE_CHECKING:
    import pyarrow as pa

    #: one row group's rows: dicts in the config's features, or (when a family has the columns
    #: as Arrow arrays already, and copying them through Python objects would cost more than
    #: the rest) a pyarrow Table with the features' schema
    Rows = list[dict[str, Any]] | pa.Table


@dataclass(frozen=True)
class StepSettings:
    """The settings a step runs with: a settings dataclass declared with
    :func:`benchsmith.core.settings.setting` and its block in ``params.yaml``. The CLI adds a
    flag per declared field and calls the step with the settings object built from the block
    and the flags given, so the step never reads those flags itself."""

    type: type
    block: tuple[str, ...]  # ("mmneedle", "render"): mmneedle.render in params.yaml
    # the fields this step reads, when not all: only they get flags on it (MULTI's ocr step
    # reads multi.sources.exams, its questions step multi.sources.release)
    only: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Step:
    """One build step, ``benchsmith build FAMILY STEP``: its help, what it reads and what it
    runs. ``inputs`` is a dataclass declared with :mod:`benchsmith.core.command_inputs` (its
    paths, ``--json``, ``--params``...); the CLI makes its flags and calls ``run(inputs)``, or
    ``run(inputs, settings)`` for a step with ``settings``."""

    name: str
    help: str
    description: str
    inputs: type
    # an exit status; a folder to publish (the CLI hands it to the one publisher); or runs to
    # score with the family's scorer before the step goes on
    run: Callable[..., int | PublishRequest | ScoreRunsRequest]
    # one block, or several (run(inputs, first, second, ...)): MMIU's plan reads what it
    # builds from mmiu: and where it runs from mmiu.plan
    settings: StepSettings | tuple[StepSettings, ...] | None = None

    @property
    def all_settings(self) -> tuple[StepSettings, ...]:
        """The step's settings blocks, in the order ``run`` receives them."""
        if self.settings is None:
            return ()
        return self.settings if isinstance(self.settings, tuple) else (self.settings,)


@dataclass(frozen=True)
class PublishRequest:
    """What a build step returns when what it makes is a published folder (MMIU's rehydrate):
    the publication and where to write it. The CLI writes it with the one publisher; a family
    describes, it never calls the publisher itself."""

    publication: Publication
    out: Path
    version: str
    max_shard_mb: float


@dataclass(frozen=True)
class ScoreRunsRequest:
    """What a build step returns when it needs model runs scored question by question (MULTI's
    Elite re-selection): the CLI scores each run with the family's own scorer
    (``Scorer.question_points``, the rules ``benchsmith score`` uses) and calls ``then`` with
    ``{run name: {question id: (points, possible)}}``; ``then`` returns the exit status. A
    family never imports the scoring package itself."""

    family: str
    rows: list[dict[str, Any]]
    runs: dict[str, Path]
    then: Callable[[dict[str, dict[str, tuple[float, float]]]], int]


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
    # the licence terms in Markdown: the card's Licence section, and LICENSE.md, which the
    # metadata's `license_link` points to when `license` is "other"
    license_text: str = ""
    # Croissant's Responsible-AI fields (croissant.json): description, collection,
    # preprocessing, limitations, biases, personal, use_cases, and `sources`, a list of
    # {name, url, license}: where the rows come from and under which terms
    rai: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CardRecipe:
    """How a dataset's card is made from its ``build_info.json`` and the splits written: the
    publisher renders the card, ``LICENSE.md`` and ``croissant.json`` from it, and a whole audit
    renders them again from the published folder and compares byte for byte, so no sentence,
    number or licence claim in them can be changed unseen."""

    family: str
    template: str  # file name in cards/
    audit_how: str
    not_rederived: Mapping[str, str]
    make: Callable[[dict[str, Any], list[SplitWritten]], Card]

    @classmethod
    def of(cls, publication: type[Publication], make: Callable[..., Card]) -> CardRecipe:
        """The recipe of a publication class whose card ``make(info, written)`` gives."""
        return cls(publication.family, publication.card_template, publication.audit_how,
                   publication.not_rederived, make)  # fmt: skip


BUILD_FACTS: dict[str, str] = {
    "provenance.code_revision": "which code ran: a fact recorded by the build, not derivable",
    "provenance.builder_version": "which benchsmith version ran: recorded, not derivable",
}


class Publication(ABC):
    """What one publish run writes; the publisher stages the folder, shards, info and card."""

    family: str  # build_info["family"]
    card_template: str  # file name in cards/
    audit_how: ClassVar[str] = ""  # for the card: how `benchsmith audit` re-derives the rows
    not_rederived: ClassVar[dict[str, str]] = BUILD_FACTS  # fields the audit cannot re-derive

    @abstractmethod
    def configs(self) -> Iterable[ConfigSpec]:
        """Configs in the order they are written."""

    def input_paths(self) -> list[Path]:
        """Files and folders the publication reads: the output may be none of them."""
        return []

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

    def card_recipe(self) -> CardRecipe:
        """The card as this publication makes it (what the audit re-renders)."""
        return CardRecipe.of(type(self), self.card)


class RowAuditor(ABC):
    """Re-derives the published rows of one dataset from their recorded sources.

    The one audit calls :meth:`check_dataset` once, then for every row it selected verifies the
    row's provenance sources (each file hashed once, through :meth:`source_path`) and calls
    :meth:`audit_row`; a whole-dataset audit ends with :meth:`check_whole`. A row whose own
    source files differ is not re-derived (the changed file is the finding).

    Set by the audit before any check: ``files`` (``files.verify(path, sha256, report)`` and
    ``files.sha256(path)`` hash a file once per audit, for sources a hook reaches itself),
    ``whole`` (every row of ``configs`` is audited, not some ids: a hook may re-derive them in
    bulk), ``ids`` (the ``--id`` values asked for, None for every row: a hook that re-derives
    in bulk may re-derive only the rows it is asked for) and ``workers`` (processes a hook may
    use).
    """

    files: Any = None
    whole: bool = False
    ids: frozenset[str] | None = None
    configs: tuple[str, ...] = ()
    workers: int = 1

    def id_column(self, config: str) -> str | None:
        """Column whose value is a row's ``--id`` (None: rows of this config have no id)."""
        return "id"

    def rederived_info(self) -> dict[str, Any]:
        """The keys of ``build_info.json`` this audit re-derived, with their re-derived values
        (read after :meth:`check_dataset`); a whole audit names each field that differs. What
        is not here is a recorded fact (versions, libraries, roots) or checked another way."""
        return {}

    def card_recipe(self) -> CardRecipe | None:
        """How the publisher made this folder's card, for a whole audit to render it again
        (the family's :meth:`Publication.card_recipe`, made from ``build_info.json`` alone)."""
        return None

    def audits_rows(self, config: str) -> bool:
        """False for a config checked as a whole in :meth:`check_dataset` (its rows are not
        read one by one)."""
        return True

    def source_path(self, source: Mapping[str, Any]) -> Path | None:
        """Where a provenance source file is on this machine; None when it is not a file the
        audit should hash (rendered, or checked by :meth:`audit_row` itself)."""
        return None

    def match(
        self, config: str, split: str, row_id: Any, expected: Mapping[Any, Any], seen: set[Any]
    ) -> Any:
        """The re-derived key a published row is compared with: its own id, or, when no
        re-derived row has that id (a changed id), the unseen re-derived row at the same
        position, so the changed id is named and the row's other columns are still compared.
        None when neither exists."""
        positions = self.__dict__.setdefault("_positions", {})
        position = positions.get((config, split), 0)
        positions[(config, split)] = position + 1
        keys = self.__dict__.setdefault("_orders", {}).setdefault((config, split), list(expected))
        if row_id in expected:
            if self.whole and position < len(keys) and keys[position] != row_id:
                self.__dict__.setdefault("order_differences", []).append(
                    (config, split, position, row_id, keys[position])
                )
            return row_id
        if position < len(keys) and keys[position] not in seen:
            return keys[position]
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

    def met_unchecked(self, config: str, split: str, row: dict[str, Any]) -> None:
        """A published row that was not re-derived because one of its source files differs
        (that file is the finding): an auditor that lists unpublished rows in
        :meth:`check_whole` counts it as published here."""
        return None

    def unpublished_id(self, row_id: str, report: AuditReport) -> bool:
        """Explain an ``--id`` that no published row has (e.g. a sample curation dropped);
        False when the id is unknown."""
        return False

    def may_explain_unpublished(self, row_id: str) -> bool:
        """Whether :meth:`unpublished_id` might explain ``row_id``, asked before the audit's
        re-derivation (minutes at full scale), so that an id nothing explains is refused at
        once; no side effects. False by default."""
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

    def not_samples(self, info: dict[str, Any], config: str) -> str | None: ...


class Family(ABC):
    """One benchmark family; each is a singleton listed in ``FAMILIES``."""

    name: ClassVar[str]
    title: ClassVar[str]
    summary: ClassVar[str]  # one line for `benchsmith build --help`
    steps: ClassVar[tuple[Step, ...]] = ()
    root_names: ClassVar[tuple[str, ...]] = ()  # what `audit --root NAME=DIR` accepts
    audit_help: ClassVar[str] = ""  # what `audit` re-derives, and what --id names

    # what `benchsmith publish FAMILY` reads: a dataclass of inputs (the built folders; see
    # benchsmith.core.command_inputs) and the settings of its `publish:` block (out, shard size)
    publish_inputs: ClassVar[type]
    publish_settings: ClassVar[type] = PublishSettings

    @abstractmethod
    def publication(self, inputs: Any, settings: PublishSettings) -> Publication:
        """Read the built inputs named by ``inputs`` (a :attr:`publish_inputs`), publishing
        with ``settings`` (a :attr:`publish_settings`: ``<family>.publish`` and its flags)."""

    @abstractmethod
    def auditor(
        self, dataset_dir: Path, info: dict[str, Any], roots: Mapping[str, str]
    ) -> RowAuditor:
        """The audit hook for one published folder; ``roots`` override recorded source roots."""

    @abstractmethod
    def columns(self, info: dict[str, Any]) -> ColumnMap:
        """Which columns hold the id, question, answer and images (for curate and predict)."""

    def not_samples(self, info: dict[str, Any], config: str) -> str | None:
        """What ``config`` holds instead of samples (e.g. images that samples point to), for
        the error of a command that needs samples; None for a config of samples."""
        return None

    def unsendable(
        self, info: dict[str, Any], config: str, options: PredictOptions | None = None
    ) -> str | None:
        """Why the samples of ``config`` cannot be sent to a model as published (images kept as
        references, say), or not by a harness (an answer that is an image), with the fix; None
        when they can, or when ``options`` make them sendable (MMIU: a ScanNet copy to render
        from). Exports leave such a config out of a whole-folder export and refuse it by name."""
        return None

    def metrics(self, info: dict[str, Any]) -> dict[str, float]:
        """The few numbers ``dvc metrics show`` prints for a published folder: ``rows`` and
        ``configs`` of samples (configs that repeat another's left out), then the family's
        :meth:`check_metrics`. Every family writes the same keys where it has them, so the
        table has a handful of columns, not one per config (``benchsmith report`` has the
        rest)."""
        configs = info.get("configs") or {}
        sample = [c for c in configs if self.not_samples(info, c) is None
                  and c not in self.repeated_configs]  # fmt: skip
        rows = sum(int(split.get("num_examples", 0)) for c in sample
                   for split in configs[c].values())  # fmt: skip
        return {"rows": rows, "configs": len(sample), **self.check_metrics(info)}

    def check_metrics(self, info: dict[str, Any]) -> dict[str, float]:
        """The build's checks in the shared keys: ``removed`` (rows or images the checks took
        out), ``duplicates`` (duplicate pictures, pairs or options found), and where a family
        has them ``shortcut_lift`` (the best blind rule's lift over chance) and ``ocr_cer``
        (the worst character error rate); default: none."""
        return {}

    def report_checks(self, info: dict[str, Any]) -> list[ReportTable]:
        """The checks this family's build ran, from ``build_info.json``, as tables for
        ``benchsmith report`` (leakage, shortcut gates, duplicates, OCR); default: none."""
        return []

    predict_options: ClassVar[tuple[str, ...]] = ()  # PredictOptions fields only it uses
    # the field of a prediction request's key that names its row (default: the id column);
    # a curated subset keeps the requests of its kept rows by it
    request_row_key: ClassVar[str | None] = None
    # configs that present samples of another config again (a subset, option rotations): an
    # export of the whole folder leaves them out unless asked for by name
    repeated_configs: ClassVar[tuple[str, ...]] = ()

    def prediction_requests(self, source: RequestSource) -> Iterator[PredictionRequest]:
        """What ``predict`` sends for each sample of ``source.config``/``source.split``, keyed
        by the fields this family's scorer reads. Default: the sample's images, then the
        question, option lines and the lmms-eval instruction, keyed by ``sample_id``."""
        from benchsmith.family.requests import generic_requests
        from benchsmith.hf.dataset_view import DatasetView

        view = DatasetView(source.dataset_dir, source.config, source.split,
                           self.columns(source.info))  # fmt: skip
        return generic_requests(view, source.options)

    def harness_rows(self, source: RequestSource) -> Iterator[HarnessRow]:
        """The samples of ``source.config``/``source.split`` as single-turn harness rows
        (``export vlmevalkit``); default: the generic reading of the family's columns. A family
        whose samples are not single-turn says which it skips, and why, by not yielding them."""
        from benchsmith.family.requests import generic_harness_rows
        from benchsmith.hf.dataset_view import DatasetView

        view = DatasetView(source.dataset_dir, source.config, source.split,
                           self.columns(source.info))  # fmt: skip
        return generic_harness_rows(view, source.config)

    def params_fields(self) -> dict[str, Any]:
        """The keys of this family's ``params.yaml`` block (schema nodes of
        :mod:`benchsmith.core.schema`), less ``publish:``, which every family shares."""
        return {}

    def declared_settings(self) -> dict[tuple[str, ...], type]:
        """Every block of this family's ``params.yaml`` declared as a settings dataclass, by its
        path: each step's, the publish block's and any a family adds (the params reference
        and the tests read them all from here)."""
        found = {one.block: one.type for s in self.steps for one in s.all_settings}
        found[(self.name, "publish")] = self.publish_settings
        return found

    def default_out(self, params: dict[str, Any]) -> Path:
        """Where ``publish`` writes by default: ``<family>.publish.out`` or ``published/<family>``."""
        from benchsmith.core.params import section
        from benchsmith.core.settings import settings_from

        return self.out_of(
            settings_from(self.publish_settings, section(params, self.name, "publish"))
        )

    def out_of(self, settings: PublishSettings) -> Path:
        """Where ``publish`` writes with ``settings`` (``--out`` or ``<family>.publish.out``,
        else ``published/<family>``)."""
        return Path(settings.out or f"published/{self.name}")
