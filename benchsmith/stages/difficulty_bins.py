"""LIME difficulty bins: how many judges answered a sample correctly (spec ``lime.md`` §2).

N, the number of judges whose score reaches the metric's cutoff, puts a sample in one bin:

============  ===============  =================  ==========================================
bin           ``paper`` (9)    ``code`` (9)       meaning
============  ===============  =================  ==========================================
zero_pass     N = 0            N = 0              nobody right: a review stage checks it
hard          1 <= N <= 2      1 <= N <= 2
middle        3 <= N <= 5      3 <= N <= 4
easy          N >= 6           N >= 5             dropped by default
============  ===============  =================  ==========================================

The paper (v1) writes "hard if N < 2", which leaves N = 2 in no bin; the ``paper`` preset puts
N = 2 in ``hard`` as the LIME README does. The ``code`` preset is LIME-M's
``difficult_filter_func``, where N = 5 is easy rather than middle.

**Other judge counts.** Edges are lower bounds (``middle``, ``easy``) stated for a reference
number of judges (9 for both presets). With ``n`` judges they are rescaled proportionally and
rounded up: ``edge_n = ceil(edge * n / reference)``, i.e. a sample is easy when its share of
correct judges reaches ``easy / reference`` (6/9 = 2/3 for ``paper``). ``zero_pass`` is always
N = 0 and ``hard`` always starts at 1. At 9 judges this gives the table above; at 8 judges
``paper`` becomes middle >= 3, easy >= 6; at 10 judges middle >= 4, easy >= 7. Explicit edges
given without a reference count (``{"middle": 3, "easy": 6}``) apply unchanged to any count.
Small judge counts can leave a bin empty; the edges used are recorded in every decision.

**Missing predictions** (a counted judge has no row for a sample) follow ``missing_policy``:
``error`` stops with counts and examples; ``treat_wrong`` counts the missing answer as
incorrect and lists the model in the evidence (a sample nobody answered is ``zero_pass`` with
reason ``MISSING_PREDICTION``); ``exclude_model`` drops every judge missing any of the given
samples from counting, reports it, and rescales the edges to the remaining judges. Exclusion is
decided over the ``sample_ids`` passed in, so call once per subtask to scope it to the subtask.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.metrics import (
    PRESCORED_CUTOFFS,
    MetricSpec,
    get_metric,
    is_correct,
    prescored_metric,
)
from benchsmith.stages.judges import JudgeScores

Difficulty = Literal["easy", "middle", "hard", "zero_pass"]
DIFFICULTIES: tuple[str, ...] = ("zero_pass", "hard", "middle", "easy")
MISSING_POLICIES = ("error", "treat_wrong", "exclude_model")
EXAMPLES_SHOWN = 5


@dataclass(frozen=True)
class BinEdges:
    """Lower edges of ``middle`` and ``easy`` for ``reference_judges`` judges (None: any count)."""

    middle: int
    easy: int
    reference_judges: int | None = 9

    def __post_init__(self) -> None:
        values = (self.middle, self.easy, self.reference_judges or self.easy)
        if any(isinstance(v, bool) or not isinstance(v, int) for v in values):
            raise BenchsmithError(
                f"bin edges must be integers, got {self}", fix="give middle/easy as judge counts"
            )
        upper = self.reference_judges if self.reference_judges is not None else self.easy
        if not 1 <= self.middle <= self.easy <= upper:
            raise BenchsmithError(
                f"bin edges need 1 <= middle <= easy <= reference_judges, got {self}",
                fix="e.g. middle 3, easy 6 for 9 judges (the paper's edges)",
            )

    def for_judges(self, n_judges: int) -> BinEdges:
        """The edges for ``n_judges`` judges: proportional, rounded up (see module docstring)."""
        if n_judges < 1:
            raise BenchsmithError("no judges to count", fix="provide judge predictions")
        ref = self.reference_judges
        if ref is None or ref == n_judges:
            return BinEdges(self.middle, self.easy, n_judges if ref is not None else None)
        middle = max(1, -(-self.middle * n_judges // ref))
        easy = max(middle, -(-self.easy * n_judges // ref))
        return BinEdges(middle, easy, n_judges)

    def classify(self, n_correct: int) -> Difficulty:
        if n_correct <= 0:
            return "zero_pass"
        if n_correct < self.middle:
            return "hard"
        if n_correct < self.easy:
            return "middle"
        return "easy"

    def as_dict(self) -> dict[str, int | None]:
        return {"middle": self.middle, "easy": self.easy, "reference_judges": self.reference_judges}


BIN_PRESETS: dict[str, BinEdges] = {
    "paper": BinEdges(middle=3, easy=6, reference_judges=9),
    "code": BinEdges(middle=3, easy=5, reference_judges=9),
}


def resolve_bins(bins: str | BinEdges | Mapping) -> BinEdges:
    """A preset name, a :class:`BinEdges`, or ``{"middle", "easy"[, "reference_judges"]}``."""
    if isinstance(bins, BinEdges):
        return bins
    if isinstance(bins, str):
        if bins not in BIN_PRESETS:
            raise BenchsmithError(
                f"unknown bins preset {bins!r}",
                fix=f"use one of {', '.join(sorted(BIN_PRESETS))} or explicit middle/easy edges",
            )
        return BIN_PRESETS[bins]
    if isinstance(bins, Mapping) and {"middle", "easy"} <= set(bins):
        extra = set(bins) - {"middle", "easy", "reference_judges"}
        if not extra:
            return BinEdges(bins["middle"], bins["easy"], bins.get("reference_judges"))
    raise BenchsmithError(
        f"cannot read bins {bins!r}",
        fix='use "paper", "code" or {"middle": 3, "easy": 6, "reference_judges": 9}',
    )


@dataclass(frozen=True)
class DifficultyConfig:
    """How to bin samples and which bins to drop (defaults: the paper's)."""

    bins: str | BinEdges | Mapping = "paper"
    drop_bins: tuple[str, ...] = ("easy",)
    missing_policy: str = "error"
    metric: str = "accuracy"
    cutoff: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "drop_bins", tuple(self.drop_bins))
        unknown = [b for b in self.drop_bins if b not in DIFFICULTIES]
        if unknown:
            raise BenchsmithError(
                f"unknown bin(s) in drop_bins: {', '.join(map(repr, unknown))}",
                fix=f"use bins from {', '.join(DIFFICULTIES)}",
            )
        if self.missing_policy not in MISSING_POLICIES:
            raise BenchsmithError(
                f"unknown missing_policy {self.missing_policy!r}",
                fix=f"use one of {', '.join(MISSING_POLICIES)}",
            )
        resolve_bins(self.bins)
        self.metric_spec()

    def edges(self) -> BinEdges:
        return resolve_bins(self.bins)

    def metric_spec(self) -> MetricSpec:
        """The metric to score judges with, with ``cutoff`` applied (BLEU-4 is pre-scored only)."""
        if self.metric in PRESCORED_CUTOFFS:
            return prescored_metric(self.metric, self.cutoff)
        return get_metric(self.metric).with_cutoff(self.cutoff)


@dataclass(frozen=True)
class DifficultyDecision:
    """One sample's bin, whether it survives, and the judge evidence behind it."""

    sample_id: str
    n_correct: int
    n_judges: int
    difficulty: Difficulty
    action: Literal["keep", "drop"]
    reason: str | None
    evidence: dict = field(default_factory=dict)


@dataclass(frozen=True)
class JudgeSelection:
    """Which judges count, and which (model, sample) predictions are missing."""

    counted: list[str]
    excluded: list[str]
    missing: dict[str, list[str]]


def select_judges(scores: JudgeScores, sample_ids: Sequence[str], policy: str) -> JudgeSelection:
    """Apply the missing-prediction policy to the judge list (errors for ``error``)."""
    missing = {
        model: [sid for sid in sample_ids if (sid, model) not in scores.scores]
        for model in scores.models
    }
    missing = {model: ids for model, ids in missing.items() if ids}
    if not scores.models:
        raise BenchsmithError(
            "no judge predictions for these samples",
            path=", ".join(scores.paths) or None,
            fix="provide judge prediction files with rows for the dataset's samples",
        )
    if missing and policy == "error":
        raise _missing_error(scores, missing)
    excluded = sorted(missing) if policy == "exclude_model" else []
    counted = [m for m in scores.models if m not in excluded]
    if not counted:
        raise BenchsmithError(
            f"every judge misses some prediction, so exclude_model leaves none "
            f"({', '.join(excluded)})",
            path=", ".join(scores.paths) or None,
            fix="complete the judge predictions or pass --missing-policy treat_wrong",
        )
    return JudgeSelection(counted, excluded, missing)


def _missing_error(scores: JudgeScores, missing: dict[str, list[str]]) -> BenchsmithError:
    total = sum(len(ids) for ids in missing.values())
    parts = []
    for model in sorted(missing):
        ids = missing[model]
        shown = ", ".join(repr(i) for i in ids[:EXAMPLES_SHOWN])
        parts.append(f"{model}: {len(ids)} (e.g. {shown})")
    return BenchsmithError(
        f"{total} missing judge prediction(s) across {len(missing)} model(s): " + "; ".join(parts),
        path=", ".join(scores.paths) or None,
        fix="add the missing rows, or pass --missing-policy treat_wrong (or exclude_model; "
        "`curate.judges.missing_policy` in params.yaml)",
    )


def _decide(
    sample_id: str,
    scores: JudgeScores,
    selection: JudgeSelection,
    edges: BinEdges,
    cutoff: float,
    config: DifficultyConfig,
) -> DifficultyDecision:
    per_model = {m: scores.score(sample_id, m) for m in selection.counted}
    present = {m: v for m, v in per_model.items() if v is not None}
    missing_models = [m for m, v in per_model.items() if v is None]
    correct = [m for m, v in present.items() if is_correct(v, cutoff, scores.tolerance)]
    difficulty = edges.classify(len(correct))
    if difficulty in config.drop_bins:
        action, reason = "drop", difficulty.upper()
    else:
        action, reason = "keep", ("MISSING_PREDICTION" if missing_models else None)
    evidence = {
        "scores": present,
        "correct_models": correct,
        "missing_models": missing_models,
        "excluded_models": list(selection.excluded),
        "cutoff": cutoff,
        "edges": edges.as_dict(),
    }
    return DifficultyDecision(
        sample_id, len(correct), len(selection.counted), difficulty, action, reason, evidence
    )


def assign_difficulty(
    scores: JudgeScores,
    sample_ids: Sequence[str],
    config: DifficultyConfig | None = None,
) -> dict[str, DifficultyDecision]:
    """A decision per sample id (in the order given); pure, no I/O.

    Correctness uses ``config.cutoff`` when set, else the cutoff ``scores`` was built with.
    """
    config = config or DifficultyConfig()
    ids = [str(s) for s in sample_ids]
    if len(set(ids)) != len(ids):
        raise BenchsmithError(
            "sample_ids contain duplicates", fix="pass each dataset sample id once"
        )
    selection = select_judges(scores, ids, config.missing_policy)
    edges = config.edges().for_judges(len(selection.counted))
    cutoff = scores.cutoff if config.cutoff is None else float(config.cutoff)
    return {sid: _decide(sid, scores, selection, edges, cutoff, config) for sid in ids}


def summarize_decisions(decisions: Mapping[str, DifficultyDecision]) -> dict:
    """Counts per bin, per action and per reason, for manifests and dataset cards."""
    by_bin = {name: 0 for name in DIFFICULTIES}
    by_action = {"keep": 0, "drop": 0}
    by_reason: dict[str, int] = {}
    for decision in decisions.values():
        by_bin[decision.difficulty] += 1
        by_action[decision.action] += 1
        if decision.reason:
            by_reason[decision.reason] = by_reason.get(decision.reason, 0) + 1
    return {"bins": by_bin, "actions": by_action, "reasons": dict(sorted(by_reason.items()))}
