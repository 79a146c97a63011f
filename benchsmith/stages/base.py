"""The stage interface: one benchmark-agnostic curation step (datatrove's filter-with-reason).

A stage looks at the samples still kept and returns a :class:`StageDecision` per sample it
decided about (``keep`` or ``drop``, a reason code, JSON evidence) plus a report for the card.
Everything else about the stage lives with it, in its one file:

- ``settings_type``: a frozen dataclass of its knobs, read from its block of ``params.yaml``
  (``curate.<params_key>``; ``params_key = None`` means fields directly under ``curate:``);
- ``reasons``: every reason code it can emit, with its meaning (the card's legend);
  ``undecided_reasons``: those that mean "could not decide" (an LLM call failed): such a
  sample is kept and counted, never dropped for the failure, and ``curate`` publishes nothing
  while one remains (unless told to);
- ``flags``: its ``benchsmith curate`` options, each overriding one settings field, read from
  the settings fields declared with :func:`benchsmith.core.settings.setting` (default, meaning,
  allowed values and flag written once: the params schema and the params reference read them
  too);
- ``card_section``: a Jinja template (Markdown) of its section in the curated card, rendered
  with its ``report`` and ``settings``;
- ``skip_reason``: why it has nothing to do (no judge files, no models ...), or None;
- ``run(samples, settings, context) -> StageResult``.

The registry is :data:`benchsmith.stages.STAGES` (one line per stage, in run order); the
executor in :mod:`benchsmith.curate.executor` knows no stage by name.
"""

from __future__ import annotations

import dataclasses
import typing
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.settings import declared, flag_of, flag_value_type, shown_default

if TYPE_CHECKING:
    from benchsmith.core.llm import LLMClient
    from benchsmith.hf.dataset_view import DatasetView, SampleView
    from benchsmith.stages.scoring_rule import ScoringRule

Action = Literal["keep", "drop"]


@dataclass(frozen=True)
class StageDecision:
    """What a stage decided about one sample, and why (``evidence`` must be JSON-able)."""

    sample_id: str
    action: Action
    reason: str | None
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def kept(self) -> bool:
        return self.action == "keep"


def count_reasons(decisions: Mapping[str, StageDecision]) -> dict[str, int]:
    """``{"keep": n, "drop": m, REASON: k, ...}``, for the counted-and-reported summaries."""
    counts: Counter[str] = Counter()
    for decision in decisions.values():
        counts[decision.action] += 1
        if decision.reason:
            counts[decision.reason] += 1
    return dict(sorted(counts.items()))


@dataclass
class StageResult:
    decisions: Mapping[str, Any]  # sample id -> StageDecision (or anything with the same fields)
    report: dict[str, Any]


@dataclass
class StageContext:
    """What a stage may use besides its samples and settings.

    ``difficulty`` is filled by the difficulty stage (sample id -> (bin, n_correct)) and read by
    later ones and by the curated publisher; ``scoring`` (and :meth:`is_correct`) scores a
    model's reply to a sample with the run's one rule (:mod:`.scoring_rule`); ``llm_client(model)`` is the one LLM client, configured once.
    """

    view: DatasetView
    scoring: ScoringRule
    llm_client: Callable[[str], LLMClient]
    difficulty: dict[str, tuple[str, int]] = field(default_factory=dict)

    def is_correct(self, sample: SampleView, reply: str) -> bool:
        return self.scoring.is_correct(sample, reply)

    def samples_with_images(self, sample_ids: set[str]) -> list[SampleView]:
        return list(self.view.iter_samples(with_images=True, only=sample_ids))


@dataclass(frozen=True)
class Flag:
    """A ``benchsmith curate`` option that overrides one settings field of its stage.

    ``kind``: ``value`` (one value), ``list`` (one or more values, a tuple field), ``off``
    (a switch that sets the field False).
    """

    flag: str
    field: str
    help: str
    kind: Literal["value", "list", "off"] = "value"
    type: Callable[[str], Any] | None = None
    choices: tuple[str, ...] | None = None
    metavar: str | None = None

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    def add_to(self, group: Any) -> None:
        if self.kind == "off":
            group.add_argument(self.flag, dest=self.dest, action="store_true", help=self.help)
            return
        metavar = self.metavar
        if metavar is None and self.choices is None:
            metavar = "N" if self.type in (int, float) else "VALUE"
        group.add_argument(
            self.flag,
            dest=self.dest,
            type=self.type,
            choices=self.choices,
            nargs="+" if self.kind == "list" else None,
            metavar=metavar,
            help=self.help,
        )

    def value(self, flags: Mapping[str, Any]) -> Any:
        """The override this flag asks for, or None when it was not given (``flags``: the
        parsed command line by destination, ``vars(args)``)."""
        given = flags.get(self.dest)
        if self.kind == "off":
            return False if given else None
        if self.kind == "list" and given is not None:
            return tuple(given)
        return given


def flag_of_setting(name: str, field: Any, info: Any, hint: Any, block: str) -> Flag:
    """The ``benchsmith curate`` option of one declared settings field (``block``: where its
    key sits in ``params.yaml``, for the help's default)."""
    kind, listed = flag_value_type(hint)
    return Flag(
        flag_of(name, info),
        name,
        f"{info.help} (default: {block}.{name}, else {shown_default(field, info)})",
        "off" if info.off_switch else "list" if listed else "value",
        kind if kind is not str else None,
        info.choices or None,
        info.metavar,
    )


class Stage(ABC):
    """One curation stage; subclasses are singletons listed in ``STAGES``."""

    name: ClassVar[str]  # the stage column of decisions.parquet
    title: ClassVar[str]
    summary: ClassVar[str]  # one line for `benchsmith curate --help`
    params_key: ClassVar[str | None]  # its block under `curate:`; None = top-level fields
    settings_type: ClassVar[type]
    reasons: ClassVar[dict[str, str]]
    # reason codes meaning "could not decide" (an LLM call failed): the sample is kept, counted
    # as undecided, and `curate` refuses to publish while any kept sample carries one
    undecided_reasons: ClassVar[frozenset[str]] = frozenset()
    card_section: ClassVar[str] = ""

    def settings_from(self, block: Mapping[str, Any] | None) -> Any:
        """Settings from its params block; an unknown key is an error naming the valid ones."""
        return settings_from_mapping(self.settings_type, block, f"curate.{self.params_key}")

    @property
    def run_only(self) -> frozenset[str]:
        """Settings that choose where the work runs (processes, a Ray cluster), not what is
        decided (declared ``shapes_output=False``): left out of the params hash and the card,
        so the curated bytes do not depend on them."""
        return frozenset(
            name
            for name, (_, info) in declared(self.settings_type).items()
            if not info.shapes_output
        )

    @property
    def flags(self) -> tuple[Flag, ...]:
        """Its ``benchsmith curate`` options, one per declared field that asks for a flag."""
        block = "curate" if self.params_key is None else f"curate.{self.params_key}"
        hints = typing.get_type_hints(self.settings_type)
        return tuple(
            flag_of_setting(name, field, info, hints[name], block)
            for name, (field, info) in declared(self.settings_type).items()
            if info.flag
        )

    def override(self, settings: Any, flags: Mapping[str, Any]) -> Any:
        """Settings with the fields its flags were given on the command line replaced."""
        given = {f.field: v for f in self.flags if (v := f.value(flags)) is not None}
        return dataclasses.replace(settings, **given) if given else settings

    @abstractmethod
    def skip_reason(
        self, samples: Sequence[SampleView], settings: Any, context: StageContext
    ) -> str | None:
        """Why the stage has nothing to do with ``samples`` (those still kept), or None."""

    @abstractmethod
    def run(
        self, samples: Sequence[SampleView], settings: Any, context: StageContext
    ) -> StageResult:
        """Decide about ``samples`` (the ones still kept, text fields only)."""


_PATH_FIELDS = {"files", "corpus", "human_verdicts", "cache_dir"}


def _coerce(name: str, value: Any, default: Any) -> Any:
    """YAML value -> field value. A tuple field also takes ``null`` (none) or one scalar (a
    one-item tuple), so ``against_splits: support`` is not read letter by letter; an integer
    for a float field becomes a float."""
    if isinstance(default, tuple):
        items = () if value is None else value if isinstance(value, list | tuple) else (value,)
        return tuple(Path(v) if name in _PATH_FIELDS else v for v in items)
    if name in _PATH_FIELDS and value is not None:
        return Path(value)
    if isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool):
        return float(value)  # `timeout_s: 60` and `60.0` are the same setting, and hash alike
    return value


def settings_from_mapping(cls: type, block: Mapping[str, Any] | None, where: str) -> Any:
    """An instance of the settings dataclass ``cls`` from a params mapping (checked keys)."""
    fields = {f.name: f for f in dataclasses.fields(cls)}
    values = dict(block or {})
    unknown = set(values) - set(fields)
    if unknown:
        raise BenchsmithError(
            f"unknown {where} settings: {', '.join(sorted(unknown))}",
            path="params.yaml",
            fix=f"valid keys: {', '.join(sorted(fields))}",
        )
    kwargs = {}
    for key, value in values.items():
        spec = fields[key]
        default = spec.default if spec.default is not dataclasses.MISSING else None
        kwargs[key] = _coerce(key, value, default)
    return cls(**kwargs)


def plain(value: Any) -> Any:
    """Settings as plain JSON (paths as strings), for the params hash and the card."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return plain(dataclasses.asdict(value))
    if isinstance(value, Path):
        return value.as_posix()
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def log_llm_stats(stage: str, stats: Mapping[str, Mapping[str, int]]) -> None:
    """Print a stage's LLM traffic (requests, cache hits, retries) for this run only.

    Run statistics stay out of the published files: a rerun answered from the cache must
    publish the same bytes as the run that paid for the calls.
    """
    from benchsmith.core.progress import log

    for model, numbers in stats.items():
        counts = ", ".join(f"{key} {value}" for key, value in sorted(dict(numbers).items()))
        log(f"{stage}: {model}: {counts}")
