"""How a curation run decides that a model's reply to a sample is right: one rule per run.

The difficulty stage scores judge replies with it and the text-only stage scores blind replies
with it, so the two can never disagree with each other, and, for a benchsmith dataset, never
with ``benchsmith score``:

``auto`` (default)
    A dataset benchsmith built (its ``build_info.json`` names a family with a scorer, directly
    or as a curated subset's source) is scored with that family's own scorer
    (:meth:`~benchsmith.scoring.base.Scorer.sample_score`): ``"2 objects"`` and ``"three"`` are
    as right for a judge as they are in ``score vlicl``. Any other dataset is scored with the
    configured metric and cutoff (LIME's Table 8 by default).
``lime-legacy``
    LIME's own per-sample verdicts, subtask by subtask, as its lmms-eval tasks logged them
    (:mod:`benchsmith.scoring.lime_legacy`), compared with a bare ``>=`` at LIME's cutoffs
    (0.6 for OK-VQA and TextVQA, else 1.0); the recorded score is that verdict (1 or 0).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.metrics import MetricSpec, is_correct

SCORING_CHOICES = ("auto", "lime-legacy")


@dataclass(frozen=True)
class ScoringRule:
    """``spec.fn(reply, gold_for(sample))`` scores a reply; ``spec.cutoff`` makes it right."""

    name: str  # for the report and the card: "vlicl scorer", "accuracy", "lime-legacy"
    spec: MetricSpec
    gold_for: Callable[[Any], Any]

    def is_correct(self, sample: Any, reply: str) -> bool:
        value = self.spec.fn(reply or "", self.gold_for(sample))
        return is_correct(value, self.spec.cutoff, self.spec.tolerance)


def family_rule(family: str) -> ScoringRule | None:
    """The family scorer as a rule, or None when the family has no scorer."""
    from benchsmith.scoring import SCORERS

    if family not in SCORERS.names():
        return None
    scorer = SCORERS.get(family)
    spec = MetricSpec(f"{family} scorer", lambda reply, row: scorer.sample_score(row, reply), 1.0)
    return ScoringRule(f"{family} scorer", spec, lambda sample: sample.row)


def lime_legacy_rule() -> ScoringRule:
    from benchsmith.scoring.lime_legacy import LEGACY_SUBTASKS, known_subtasks, legacy_subtask

    def gold_for(sample: Any) -> tuple[str, Any, Any]:
        from benchsmith.stages.difficulty import gold_for_scoring

        subtask = legacy_subtask(sample.subtask)
        if subtask is None:
            raise BenchsmithError(
                f"sample {sample.sample_id!r}: subtask {sample.subtask!r} is not a LIME subtask",
                fix=f"lime-legacy scoring knows {', '.join(known_subtasks())}; name the subtask "
                "column with --subtask-column, or use --judge-scoring auto",
            )
        return subtask, gold_for_scoring(sample), sample.row

    def verdict(reply: str, gold: tuple[str, Any, Any]) -> float:
        """LIME's verdict, 1.0 or 0.0: the subtask's score against the subtask's cutoff."""
        subtask, answer, row = gold
        score, cutoff = LEGACY_SUBTASKS[subtask]
        return 1.0 if score(reply, answer, row) >= cutoff else 0.0

    spec = MetricSpec("lime-legacy", verdict, 1.0, tolerance=0.0)
    return ScoringRule("lime-legacy", spec, gold_for)


def build_scoring_rule(scoring: str, metric: MetricSpec, family: str | None) -> ScoringRule:
    """The run's rule (see the module docstring); ``metric`` is the configured one and
    ``family`` the benchsmith family of the dataset's rows (None: a dataset from elsewhere)."""
    from benchsmith.stages.difficulty import gold_for_scoring

    if scoring not in SCORING_CHOICES:
        raise BenchsmithError(
            f"unknown judge scoring {scoring!r}", fix=f"use one of {', '.join(SCORING_CHOICES)}"
        )
    if scoring == "lime-legacy":
        return lime_legacy_rule()
    rule = family_rule(family) if family else None
    return rule or ScoringRule(metric.name, metric, gold_for_scoring)
