"""Score an MMNeedle predictions JSONL against a published ``m{M}_n{N}_k{K}`` config.

Metrics follow the paper (spec §4), coarse to fine: *existence* (did the model correctly say
whether the needles are there), *index* (right image for every needle) and *exact* (right
image, row and column for every needle), each with a binomial standard error. Three evaluator
bugs from spec §6 are fixed:

- every sample in the config is in the denominator: a missing row, a ``null`` response or an
  unparsable answer is scored as wrong and counted (``missing``/``unparsed``), never dropped;
- index/exact on negatives are not compared with a meaningless gold index: a negative is right
  at every level iff the model says every needle is absent;
- per-position accuracy uses independent buckets per depth and per cell (the original aliased
  ``[[]]*10``), and a needle the prediction does not cover counts as wrong.

``strict=True`` reports what the original evaluators compute, computed the same way per sample
(:mod:`benchsmith.scoring.mmneedle_legacy`): separate positive and negative runs, the original
string matching, ``None`` responses out of the denominator, and no metric the original never
computes (no pooled accuracy, no standard errors).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.base import ScoreOption, Scorer, rate, read_gold_table
from benchsmith.scoring.mmneedle_legacy import legacy_report
from benchsmith.scoring.mmneedle_parse import Location, ParsedAnswer, parse_answer
from benchsmith.scoring.predictions import prediction_lines

SPLIT = "test"
SUBSET_COLUMN = "paper_eval_subset"
SUBSETS = ("all", "paper")
COLUMNS = [
    "sample_id",
    "num_images",
    "grid",
    "num_needles",
    "is_positive",
    "needles",
    "gold_answer",
]
METRICS = ("existence", "index", "exact")


@dataclass(frozen=True)
class GoldSample:
    """One published row, reduced to what scoring needs."""

    sample_id: int
    is_positive: bool
    locations: tuple[Location | None, ...]  # 1-based; None for the absent needles of negatives
    gold_answer: str
    num_images: int = 1
    grid: int = 1


@dataclass(frozen=True)
class Judgement:
    """Per-sample verdicts plus per-needle ones (positives only) for ``per_position``."""

    existence: bool
    index: bool
    exact: bool
    needle_index: tuple[bool, ...] = ()
    needle_exact: tuple[bool, ...] = ()


def _format_location(loc: Location | None) -> str:
    return "-1" if loc is None else ", ".join(str(v) for v in loc)


def _gold_from_row(row: dict[str, Any], path: Path) -> GoldSample:
    """Check one row against the published contract, so a broken build fails loudly here."""
    sid = row["sample_id"]
    needles = row["needles"] or []
    locations: list[Location | None] = []
    for needle in needles:
        fields = (needle["image_index"], needle["row"], needle["col"])
        locations.append(
            None if None in fields else (int(fields[0]), int(fields[1]), int(fields[2]))
        )
    canonical = "; ".join(_format_location(loc) for loc in locations)
    problem = None
    if len(needles) != row["num_needles"]:
        problem = f"{len(needles)} needles but num_needles={row['num_needles']}"
    elif row["is_positive"] == all(loc is None for loc in locations):
        problem = f"needle positions do not match is_positive={row['is_positive']}"
    elif row["gold_answer"] != canonical:
        problem = f"gold_answer {row['gold_answer']!r} != needles ({canonical!r})"
    if problem:
        raise BenchsmithError(
            f"sample {sid}: {problem}", path=path, fix="rebuild and republish this config"
        )
    return GoldSample(
        sid,
        bool(row["is_positive"]),
        tuple(locations),
        row["gold_answer"],
        int(row["num_images"]),
        int(row["grid"]),
    )


def load_gold(dataset_dir: str | Path, config: str, subset: str = "all") -> list[GoldSample]:
    """Read the gold columns of ``DATASET_DIR/data/<config>/test-*.parquet`` (sorted shards).

    ``subset="paper"`` keeps the rows flagged ``paper_eval_subset`` (the samples the paper
    evaluated), so scores are comparable with the paper's tables.
    """
    import polars as pl  # loaded when scoring runs, not when the CLI lists its options

    columns = [*COLUMNS, SUBSET_COLUMN] if subset == "paper" else COLUMNS
    table = read_gold_table(dataset_dir, config, SPLIT, columns)
    config_dir = Path(dataset_dir) / "data" / config
    frame = pl.from_arrow(table)
    if subset == "paper":
        frame = frame.filter(pl.col(SUBSET_COLUMN)).drop(SUBSET_COLUMN)
    if frame["sample_id"].is_duplicated().any():
        dup = frame.filter(frame["sample_id"].is_duplicated())["sample_id"][0]
        raise BenchsmithError(f"duplicate sample_id {dup}", path=config_dir, fix="republish")
    return [_gold_from_row(row, config_dir) for row in frame.iter_rows(named=True)]


def _parse_sample_id(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def read_predictions(path: str | Path) -> dict[int, str | None]:
    """Read ``{"sample_id", "response"}`` JSONL rows (extra keys ignored, blank lines skipped).

    A line that is not an object, or a second row for an id (naming both lines), is an error.
    """
    path = Path(path)
    fix = 'write one JSON object per line: {"sample_id": 0, "response": "1, 2, 3"}'
    predictions: dict[int, str | None] = {}
    lines: dict[int, int] = {}
    for number, row in prediction_lines(path, fix):
        if not isinstance(row, dict):
            raise BenchsmithError(f"line {number}: not a JSON object", path=path, fix=fix)
        if "response" not in row:
            raise BenchsmithError(f"line {number}: no 'response' key", path=path, fix=fix)
        sid = _parse_sample_id(row.get("sample_id"))
        if sid is None:
            raise BenchsmithError(
                f"line {number}: sample_id must be an integer", path=path, fix=fix
            )
        response = row["response"]
        if response is not None and not isinstance(response, str):
            raise BenchsmithError(
                f"line {number}: response must be a string or null", path=path, fix=fix
            )
        if sid in predictions:
            raise BenchsmithError(
                f"line {number}: second row for sample_id {sid}; the first is line {lines[sid]}",
                path=path,
                fix="keep one row per sample_id",
            )
        predictions[sid] = response
        lines[sid] = number
    return predictions


def judge_lenient(gold: GoldSample, parsed: ParsedAnswer) -> Judgement:
    """Compare a parsed answer with the gold needles (missing/unparsed are wrong everywhere)."""
    if not gold.is_positive:
        right = parsed.all_absent
        return Judgement(right, right, right)
    k = len(gold.locations)
    if parsed.status != "ok" or len(parsed.locations) != k:
        return Judgement(False, False, False, (False,) * k, (False,) * k)
    pairs = list(zip(parsed.locations, gold.locations, strict=True))
    # A needle that is absent in the gold (the extra needles of a K > slots sample) is right
    # only when the model says -1 for it; a present one needs the right index / location.
    needle_index = tuple(
        (p is None) if g is None else (p is not None and p[0] == g[0]) for p, g in pairs
    )
    needle_exact = tuple((p is None) if g is None else p == g for p, g in pairs)
    existence = all((p is None) == (g is None) for p, g in pairs)
    return Judgement(existence, all(needle_index), all(needle_exact), needle_index, needle_exact)


def _block(judgements: list[Judgement]) -> dict[str, Any]:
    block: dict[str, Any] = {"n": len(judgements)}
    for metric in METRICS:
        p, se = rate([getattr(j, metric) for j in judgements])
        block[f"{metric}_accuracy"] = p
        block[f"{metric}_accuracy_se"] = se
    return block


def per_position(pairs: list[tuple[GoldSample, Judgement]]) -> dict[str, Any]:
    """Per-needle accuracy of positives by image index (depth) and by ``row,col`` cell."""
    buckets: dict[str, dict[Any, dict[str, list[bool]]]] = {
        "by_image_index": defaultdict(lambda: {"index": [], "exact": []}),
        "by_cell": defaultdict(lambda: {"index": [], "exact": []}),
    }
    for gold, judgement in pairs:
        if not gold.is_positive:
            continue
        for loc, hit_index, hit_exact in zip(
            gold.locations, judgement.needle_index, judgement.needle_exact, strict=True
        ):
            if loc is None:
                continue
            for axis, key in (("by_image_index", loc[0]), ("by_cell", (loc[1], loc[2]))):
                buckets[axis][key]["index"].append(hit_index)
                buckets[axis][key]["exact"].append(hit_exact)
    report: dict[str, Any] = {}
    for axis, groups in buckets.items():
        report[axis] = {
            (str(key) if isinstance(key, int) else f"{key[0]},{key[1]}"): {
                "n": len(hits["exact"]),
                "index_accuracy": rate(hits["index"])[0],
                "exact_accuracy": rate(hits["exact"])[0],
            }
            for key, hits in sorted(groups.items())
        }
    return report


def score_predictions(
    dataset_dir: str | Path,
    config: str,
    predictions_path: str | Path,
    *,
    strict: bool = False,
    subset: str = "all",
    strict_ids: bool = False,
) -> dict[str, Any]:
    """Score one config; returns a JSON-serialisable report (see the module docstring).

    ``strict_ids`` makes a sample_id that is not in the config an error instead of a count.
    """
    if subset not in SUBSETS:
        raise BenchsmithError(f"unknown subset {subset!r}", fix=f"use one of {', '.join(SUBSETS)}")
    all_golds = load_gold(dataset_dir, config)
    golds = all_golds if subset == "all" else load_gold(dataset_dir, config, subset)
    predictions = read_predictions(predictions_path)
    known = {gold.sample_id for gold in all_golds}  # in the config, even if outside the subset
    unknown = sorted(sid for sid in predictions if sid not in known)
    if unknown and strict_ids:
        raise BenchsmithError(
            f"{len(unknown)} sample_id(s) are not samples of config {config!r} "
            f"(first: {unknown[0]})",
            path=predictions_path,
            fix="score each config with its own predictions, or drop --strict-ids",
        )
    if strict:
        return {
            "config": config,
            "strict": True,
            "subset": subset,
            **legacy_report(golds, predictions, known),
        }
    pairs: list[tuple[GoldSample, Judgement]] = []
    unparsed = missing = 0
    for gold in golds:
        parsed = parse_answer(predictions.get(gold.sample_id), len(gold.locations))
        unparsed += parsed.status == "unparsed"
        missing += parsed.status == "missing"
        pairs.append((gold, judge_lenient(gold, parsed)))
    overall = _block([j for _, j in pairs])
    return {
        "config": config,
        **{key: overall[key] for key in ("n", *(f"{m}_accuracy" for m in METRICS))},
        "positive": _block([j for g, j in pairs if g.is_positive]),
        "negative": _block([j for g, j in pairs if not g.is_positive]),
        "unparsed": unparsed,
        "missing": missing,
        "unknown_ids": sum(sid not in known for sid in predictions),
        "strict": False,
        "subset": subset,
        **{f"{m}_accuracy_se": overall[f"{m}_accuracy_se"] for m in METRICS},
        "per_position": per_position(pairs),
    }


class MmneedleScorer(Scorer):
    family = "mmneedle"
    summary = "existence / index / exact accuracy of m{M}_n{N}_k{K} configs"
    headline = "exact_accuracy"
    description = """\
Predictions: JSONL, one object per line, {"sample_id": 0, "response": "3, 1, 2"}; extra keys
are ignored, sample_id may be an int or a numeric string, response may be null.

Metrics (coarse to fine, each with a binomial standard error sqrt(p(1-p)/n)):
  existence  positive: the answer locates every present needle and says -1 exactly for the
             absent ones (only K > slots samples, e.g. m1_n2_k5, mix both);
             negative: the answer says every needle is absent (-1).
  index      positive: every needle's image index is right; negative: same as existence.
  exact      positive: every needle's (index, row, col) is right; negative: same as existence.
Top-level numbers are over all samples; "positive" and "negative" break them down.
Every sample of the config is in the denominator: a missing row or null response ("missing")
and an unreadable answer ("unparsed") count as wrong. "per_position" gives per-needle accuracy
of positives by image index (needle depth) and by row,col cell.

Answer parsing (default, lenient): strips whitespace, markdown ticks/bold, quotes, a leading
"Answer:" label and trailing periods; needles are split on ";" (or newlines); each is -1 or
three integers separated by commas/spaces, optionally in brackets. So "1,2,3", "(1, 2, 3)",
"Answer: 1, 2, 3" and "1, 2, 3." all read as 1, 2, 3, and a single "-1" means every needle is
absent. In prose ("The answer is 10, 1, 1.", "10, 1, 1\nBecause ...") the answer is taken when
exactly one well-formed answer (K comma-separated triples or -1) occurs; two different ones,
two numbers or the wrong number of needles is "unparsed", and unparsed is wrong.

--legacy reports exactly what the original evaluate.py (K=1) / evaluate_multi.py (K>1) compute,
per sample and the same way: positive and negative samples are separate runs ("positive",
"negative"); the ground truth is the original string ("0, 0, 0" for an absent needle, "-1" for
a negative); the response only loses newlines, outer spaces and dots, so "1,2,3" is wrong; a
negative's index compares with gold "0" (a correct "-1" gets index 0) and its exact match only
accepts "-1"; K>1 adds first/all index and exact ("all" pools needles over the shorter of the
two lists). Null responses and absent rows leave the denominator, as in the original, and are
counted under "excluded". K=1 positive runs get the original's per-cell exact map and, for
10-image haystacks, its per-depth values, which its [[]]*10 lists make all equal to the run's
pooled accuracy. "printed_by_original" lists the metrics the original prints; nothing the
original never computes (pooled positive+negative accuracy, standard errors) is reported.
"""
    options = (
        ScoreOption(
            "--subset",
            "all: every sample of the config (default); paper: only the samples the paper "
            "evaluated (paper_eval_subset: first 1,000 positives and negatives for K=1, 100 for "
            "K>1)",
            choices=SUBSETS,
            default="all",
        ),
        ScoreOption(
            "--legacy",
            "report exactly the metrics the original evaluators compute, per sample, the "
            "original way (see above)",
            keyword="strict",
        ),
    )

    def score_file(
        self,
        dataset_dir: Path,
        config: str,
        predictions: Path,
        *,
        subset: str = "all",
        strict: bool = False,
        strict_ids: bool = False,
        **_: Any,
    ) -> dict[str, Any]:
        return score_predictions(
            dataset_dir, config, predictions, strict=strict, subset=subset, strict_ids=strict_ids
        )

    def sample_score(self, row: dict[str, Any], response: str) -> float:
        gold = _gold_from_row(row, Path("<row>"))
        return float(judge_lenient(gold, parse_answer(response, len(gold.locations))).exact)

    def reference_predictions(
        self, dataset_dir: Path, config: str, response: str | None = None
    ) -> list[dict[str, Any]]:
        return [
            {"sample_id": g.sample_id, "response": g.gold_answer if response is None else response}
            for g in load_gold(dataset_dir, config)
        ]


MMNEEDLE_SCORER = MmneedleScorer()
