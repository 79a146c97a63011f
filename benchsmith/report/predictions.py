"""A predictions file as the report shows it: each reply's verdict by the family's scorer, the
accuracy per config and per category with Wilson intervals, and the wrong answers.

The headline is the number ``benchsmith score`` prints (``Scorer.score_file``); the breakdown
uses ``Scorer.sample_score``, the same scorer's verdict on one reply, which is also what
curation uses, so the bars and the headline never disagree about a reply.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.intervals import wilson_interval


@dataclass(frozen=True)
class Rate:
    label: str
    correct: int
    n: int
    low: float
    high: float

    @property
    def accuracy(self) -> float:
        return self.correct / self.n if self.n else 0.0


@dataclass
class Wrong:
    sample_id: str
    key: dict[str, Any]
    response: str


@dataclass
class RunBreakdown:
    """One predictions file over one config."""

    path: Path
    config: str
    model: str
    headline_name: str
    headline: float | None
    overall: Rate
    categories: list[Rate]
    wrong: list[Wrong] = field(default_factory=list)
    unknown: int = 0
    missing: int = 0


def read_predictions(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise BenchsmithError("predictions file not found", path=path,
                              fix="pass the JSONL `benchsmith predict` wrote")  # fmt: skip
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise BenchsmithError(f"line {number} is not JSON ({exc.msg})", path=path,
                                      fix="each line is one JSON object, as predict writes") from exc  # fmt: skip
            if not isinstance(row, dict) or "response" not in row:
                raise BenchsmithError(f"line {number} has no response field", path=path,
                                      fix="each line holds its key fields and response")  # fmt: skip
            rows.append(row)
    return rows


def rate(label: str, verdicts: list[bool]) -> Rate:
    low, high = wilson_interval(sum(verdicts), len(verdicts))
    return Rate(label, sum(verdicts), len(verdicts), low, high)


def category_of(prediction: dict[str, Any], category: str) -> str:
    """A reply's category: the row's (MMIU's task, MULTI's question type), and its shot count
    for an in-context run, whose accuracy depends on it."""
    if "n_shot" in prediction:
        return f"{category} · {prediction['n_shot']}-shot"
    return category


def break_down(path: Path, config: str, predictions: list[dict[str, Any]],
               rows: dict[str, dict[str, Any]], categories: dict[str, str], key_field: str,
               scorer: Any, dataset_dir: Path, wrong_limit: int) -> RunBreakdown:  # fmt: skip
    """Verdicts of every reply to a row of ``config`` (``rows`` by id) and the headline."""
    verdicts: dict[str, list[bool]] = defaultdict(list)
    overall: list[bool] = []
    wrong: list[Wrong] = []
    unknown, answered = 0, set()
    for prediction in predictions:
        sample_id = str(prediction.get(key_field))
        row = rows.get(sample_id)
        if row is None:
            unknown += 1
            continue
        answered.add(sample_id)
        right = scorer.sample_score(row, str(prediction.get("response") or "")) >= 1.0
        overall.append(right)
        verdicts[category_of(prediction, categories[sample_id])].append(right)
        if not right and len(wrong) < wrong_limit:
            key = {
                k: v for k, v in prediction.items() if k not in ("response", "model", "cache_key")
            }
            wrong.append(Wrong(sample_id, key, str(prediction.get("response") or "")))
    if not overall:
        raise BenchsmithError(f"no prediction in this file answers a sample of {config!r} "
                              f"(rows are matched by {key_field})", path=path,
                              fix="pass the file as CONFIG=FILE with the config it was "
                              "predicted on")  # fmt: skip
    report = scorer.score_file(dataset_dir, config, path, strict_ids=False)
    models = {str(p.get("model")) for p in predictions if p.get("model")}
    return RunBreakdown(path, config, ", ".join(sorted(models)) or "(unnamed)", scorer.headline,
                        scorer.headline_value(report), rate("all", overall),
                        [rate(label, v) for label, v in sorted(verdicts.items())], wrong,
                        unknown, len(rows) - len(answered))  # fmt: skip
