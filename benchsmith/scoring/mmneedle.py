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

``strict=True`` reproduces the original string matching (``evaluate.py`` for K=1,
``evaluate_multi.py`` for K>1), with one deliberate deviation: ``None`` responses and absent
rows still count as wrong (reported as ``missing``) instead of leaving the denominator.
``unparsed`` always reports what the lenient parser could not read, so both modes can be compared.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.mmneedle_parse import (
    Location,
    ParsedAnswer,
    parse_answer,
    strict_absent_forms,
    strict_normalize,
)
from benchsmith.scoring.predictions_file import prediction_lines

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
    return GoldSample(sid, bool(row["is_positive"]), tuple(locations), row["gold_answer"])


def load_gold(dataset_dir: str | Path, config: str, subset: str = "all") -> list[GoldSample]:
    """Read ``DATASET_DIR/data/<config>/test-*.parquet`` (sorted shards, needed columns only).

    ``subset="paper"`` keeps the rows flagged ``paper_eval_subset`` (the samples the paper
    evaluated), so scores are comparable with the paper's tables.
    """
    data_dir = Path(dataset_dir) / "data"
    config_dir = data_dir / config
    if not config_dir.is_dir():
        available = (
            sorted(p.name for p in data_dir.iterdir() if p.is_dir()) if data_dir.is_dir() else []
        )
        raise BenchsmithError(
            f"config {config!r} not found; available: {', '.join(available) or 'none'}",
            path=config_dir,
            fix="pass --config with one of the available configs, or --dataset pointing at a "
            "published MMNeedle folder (the one holding data/)",
        )
    shards = sorted(config_dir.glob("test-*.parquet"))
    if not shards:
        raise BenchsmithError(
            f"no test-*.parquet shards in config {config!r}",
            path=config_dir,
            fix="republish the dataset",
        )
    columns = [*COLUMNS, SUBSET_COLUMN] if subset == "paper" else COLUMNS
    try:
        frame = pl.read_parquet(shards, columns=columns)
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise BenchsmithError(
            f"cannot read the shards of config {config!r}: {exc}",
            path=config_dir,
            fix="republish the dataset; the scorer needs the columns " + ", ".join(columns),
        ) from exc
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
    """Read ``{"sample_id", "response"}`` JSONL rows (extra keys ignored, blank lines skipped)."""
    path = Path(path)
    fix = 'write one JSON object per line: {"sample_id": 0, "response": "1, 2, 3"}'
    predictions: dict[int, str | None] = {}
    for number, row in prediction_lines(path, fix):
        if not isinstance(row, dict) or "response" not in row:
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
                f"line {number}: duplicate sample_id {sid}", path=path, fix="keep one row per id"
            )
        predictions[sid] = response
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


def judge_strict(gold: GoldSample, response: str | None) -> Judgement:
    """The original string matching; ``None`` is wrong instead of dropped."""
    k = len(gold.locations)
    if response is None:
        return Judgement(False, False, False, (False,) * k, (False,) * k)
    pred = strict_normalize(response)
    if k == 1:  # evaluate.py never splits on "; "
        parts = [pred]
    else:  # evaluate_multi.py
        parts = [part.strip() for part in pred.split("; ")]
        pred = "; ".join(parts)
    says_absent = pred in strict_absent_forms(k)
    if not gold.is_positive:
        return Judgement(says_absent, says_absent, says_absent)
    gold_parts = gold.gold_answer.split("; ")
    gold_index = [part.split(", ")[0] for part in gold_parts]
    pred_index = [part.split(", ")[0] for part in parts]
    needle_index = tuple(j < len(parts) and pred_index[j] == gi for j, gi in enumerate(gold_index))
    needle_exact = tuple(j < len(parts) and parts[j] == gp for j, gp in enumerate(gold_parts))
    return Judgement(
        not says_absent,
        pred_index == gold_index,
        pred == gold.gold_answer,
        needle_index,
        needle_exact,
    )


def _rate(hits: list[bool]) -> tuple[float | None, float | None]:
    """Accuracy and binomial standard error sqrt(p(1-p)/n); ``None`` when there is no sample."""
    if not hits:
        return None, None
    p = sum(hits) / len(hits)
    return p, math.sqrt(p * (1 - p) / len(hits))


def _block(judgements: list[Judgement]) -> dict[str, Any]:
    block: dict[str, Any] = {"n": len(judgements)}
    for metric in METRICS:
        p, se = _rate([getattr(j, metric) for j in judgements])
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
                "index_accuracy": _rate(hits["index"])[0],
                "exact_accuracy": _rate(hits["exact"])[0],
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
) -> dict[str, Any]:
    """Score one config; returns a JSON-serialisable report (see the module docstring)."""
    if subset not in SUBSETS:
        raise BenchsmithError(f"unknown subset {subset!r}", fix=f"use one of {', '.join(SUBSETS)}")
    all_golds = load_gold(dataset_dir, config)
    golds = all_golds if subset == "all" else load_gold(dataset_dir, config, subset)
    predictions = read_predictions(predictions_path)
    known = {gold.sample_id for gold in all_golds}  # in the config, even if outside the subset
    pairs: list[tuple[GoldSample, Judgement]] = []
    unparsed = missing = 0
    for gold in golds:
        response = predictions.get(gold.sample_id)
        parsed = parse_answer(response, len(gold.locations))
        unparsed += parsed.status == "unparsed"
        missing += (response is None) if strict else (parsed.status == "missing")
        judgement = judge_strict(gold, response) if strict else judge_lenient(gold, parsed)
        pairs.append((gold, judgement))
    overall = _block([j for _, j in pairs])
    return {
        "config": config,
        **{key: overall[key] for key in ("n", *(f"{m}_accuracy" for m in METRICS))},
        "positive": _block([j for g, j in pairs if g.is_positive]),
        "negative": _block([j for g, j in pairs if not g.is_positive]),
        "unparsed": unparsed,
        "missing": missing,
        "unknown_ids": sum(sid not in known for sid in predictions),
        "strict": strict,
        "subset": subset,
        **{f"{m}_accuracy_se": overall[f"{m}_accuracy_se"] for m in METRICS},
        "per_position": per_position(pairs),
    }
