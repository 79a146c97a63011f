"""``score --legacy`` for MMNeedle (``--strict`` before 0.2): the original evaluators' verdicts, sample by sample.

The original repository scores K=1 runs with ``evaluate.py`` and K>1 runs with
``evaluate_multi.py``; positive samples (ids 0...) and negative samples (ids 5000...) are
separate runs. Both compare strings. This module reproduces, per sample, what they compute:

- the ground truth is the original's string: ``"i, r, c"`` per needle (1-based) joined by
  ``"; "``, and ``"0, 0, 0"`` for an absent needle (0-based ``-1`` plus one); when the first
  needle's index is ``"0"`` the whole ground truth becomes ``"-1"`` (a negative sample);
- the response is cleaned by deleting every newline, then stripping spaces, dots and spaces;
  K>1 responses are split on ``"; "``, each part stripped, and joined again;
- *existence*: a sample whose ground truth is ``"-1"`` is right iff the response is an absent
  form (only ``"-1"`` for K=1; also ``-1; -1``, ``-1, -1``, ``-1, -1, -1; ...``, ``-1-1`` for
  K>1); any other sample is right iff the response is not an absent form (so garbage "exists");
- *index*: the first comma-field of every needle equals the ground truth's, as strings and as
  lists (a negative's gold index is ``"0"``: ``"-1"`` gets 0 and ``"0, 0, 0"`` gets 1);
- *exact*: the whole cleaned response equals the ground truth (for a negative with K>1 only
  ``"-1"`` matches, not ``"-1; -1"``);
- K>1 also computes *first index* and *first exact* (the first needle only) and *all index* and
  *all exact*, which pool needle verdicts over ``min(len(gold), len(pred))`` positions, so
  needles the response leaves out are not counted;
- ``None`` responses leave the denominator (the original lists them as "Empty ids"); rows absent
  from the predictions file are treated the same way and both are counted;
- K=1 positive runs also get the original's per-cell exact accuracy (row x column, 0 for a cell
  without samples) and, for 10-image haystacks, its per-depth accuracy. The original builds the
  depth lists with ``[[]] * 10``, so all ten are one list: every depth shows the run's pooled
  index and exact accuracy, and strict mode reports exactly that.

The original prints existence for every run and index/exact (plus first/all for K>1) only for
positive runs; negative runs' index and exact are computed but never printed. Both are reported
here, and ``printed_by_original`` says which the original shows. Combined positive+negative
accuracies and standard errors are never computed by the original and are not reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from benchsmith.scoring.mmneedle_parse import strict_absent_forms, strict_normalize

if TYPE_CHECKING:
    from benchsmith.scoring.mmneedle import GoldSample

PRINTED_POSITIVE_K1 = ("existence_accuracy", "index_accuracy", "exact_accuracy")
PRINTED_POSITIVE_MULTI = (
    *PRINTED_POSITIVE_K1,
    "first_index_accuracy",
    "first_exact_accuracy",
    "all_index_accuracy",
    "all_exact_accuracy",
)
PRINTED_NEGATIVE = ("existence_accuracy",)


@dataclass(frozen=True)
class LegacyVerdict:
    """What the original evaluator appends for one sample (1 = True)."""

    existence: bool
    index: bool
    exact: bool
    first_index: bool
    first_exact: bool
    all_index: tuple[bool, ...]
    all_exact: tuple[bool, ...]


def legacy_ground_truth(gold: GoldSample) -> str:
    """The original's ``ground_truth`` string: ``"0, 0, 0"`` for an absent needle."""
    return "; ".join(
        "0, 0, 0" if loc is None else f"{loc[0]}, {loc[1]}, {loc[2]}" for loc in gold.locations
    )


def judge_legacy(gold: GoldSample, response: str) -> LegacyVerdict:
    """One non-``None`` response, judged as ``evaluate.py`` / ``evaluate_multi.py`` judge it."""
    truth = legacy_ground_truth(gold)
    pred = strict_normalize(response)
    k = len(gold.locations)
    truth_parts = truth.split("; ") if k > 1 else [truth]
    truth_index = [part.split(", ")[0] for part in truth_parts]
    if truth_index[0] == "0":
        truth = "-1"
    if k > 1:
        pred_parts = [part.strip() for part in pred.split("; ")]
        pred = "; ".join(pred_parts)
    else:
        pred_parts = [pred]
    pred_index = [part.split(", ")[0] for part in pred_parts]
    says_absent = pred in strict_absent_forms(k)
    shared = range(min(len(truth_parts), len(pred_parts)))
    return LegacyVerdict(
        existence=(truth == "-1") == says_absent,
        index=truth_index == pred_index if k > 1 else truth_index[0] == pred_index[0],
        exact=truth == pred,
        first_index=truth_index[0] == pred_index[0],
        first_exact=truth_parts[0] == pred_parts[0],
        all_index=tuple(truth_index[i] == pred_index[i] for i in shared),
        all_exact=tuple(truth_parts[i] == pred_parts[i] for i in shared),
    )


def _mean(values: list[bool]) -> float | None:
    return sum(values) / len(values) if values else None


def _run_block(pairs: list[tuple[GoldSample, LegacyVerdict]], multi: bool) -> dict[str, Any]:
    verdicts = [v for _, v in pairs]
    block: dict[str, Any] = {"n": len(verdicts)}
    for metric in ("existence", "index", "exact"):
        block[f"{metric}_accuracy"] = _mean([getattr(v, metric) for v in verdicts])
    if multi:
        block["first_index_accuracy"] = _mean([v.first_index for v in verdicts])
        block["first_exact_accuracy"] = _mean([v.first_exact for v in verdicts])
        block["all_index_accuracy"] = _mean([hit for v in verdicts for hit in v.all_index])
        block["all_exact_accuracy"] = _mean([hit for v in verdicts for hit in v.all_exact])
    return block


def _positive_positions(pairs: list[tuple[GoldSample, LegacyVerdict]]) -> dict[str, Any]:
    """``evaluate.py``'s per-cell map and (M=10) its aliased per-depth lists, K=1 only."""
    if not pairs:
        return {}
    grid = pairs[0][0].grid
    cells: dict[tuple[int, int], list[bool]] = {
        (r, c): [] for r in range(1, grid + 1) for c in range(1, grid + 1)
    }
    for gold, verdict in pairs:
        loc = gold.locations[0]
        if loc is not None and (loc[1], loc[2]) in cells:
            cells[(loc[1], loc[2])].append(verdict.exact)
    report: dict[str, Any] = {
        "by_cell": {
            f"{r},{c}": {"n": len(hits), "exact_accuracy": _mean(hits) or 0.0}
            for (r, c), hits in cells.items()
        }
    }
    if pairs[0][0].num_images == 10:
        pooled_index = _mean([v.index for _, v in pairs])
        pooled_exact = _mean([v.exact for _, v in pairs])
        report["by_image_index"] = {
            str(depth): {"index_accuracy": pooled_index, "exact_accuracy": pooled_exact}
            for depth in range(1, 11)
        }
    return report


def legacy_report(
    golds: list[GoldSample], predictions: dict[int, str | None], known: set[int]
) -> dict[str, Any]:
    """The strict-mode report body: positive and negative runs, as the original computes them."""
    runs: dict[bool, list[tuple[GoldSample, LegacyVerdict]]] = {True: [], False: []}
    empty = absent = 0
    for gold in golds:
        if gold.sample_id not in predictions:
            absent += 1
            continue
        response = predictions[gold.sample_id]
        if response is None:
            empty += 1
            continue
        runs[gold.is_positive].append((gold, judge_legacy(gold, response)))
    multi = bool(golds) and len(golds[0].locations) > 1
    positive = _run_block(runs[True], multi)
    if not multi:
        positive["per_position"] = _positive_positions(runs[True])
    return {
        "positive": positive,
        "negative": _run_block(runs[False], multi),
        "printed_by_original": {
            "positive": list(PRINTED_POSITIVE_MULTI if multi else PRINTED_POSITIVE_K1),
            "negative": list(PRINTED_NEGATIVE),
        },
        "excluded": {"null_responses": empty, "absent_rows": absent},
        "unknown_ids": sum(sid not in known for sid in predictions),
    }
