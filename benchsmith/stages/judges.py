"""Judge predictions for difficulty filtering: read the JSONL files, score every row.

Each judge model contributes rows of one of two shapes (extra keys are ignored)::

    {"sample_id": 17, "model": "llava1.5_7b", "response": "The answer is B"}
    {"sample_id": "coco/42", "model": "idefics2", "score": 0.25}

``response`` rows are scored with a per-sample metric against the dataset's gold answers;
``score`` rows arrive pre-scored (the only way in for BLEU-4 captions) and must lie in [0, 1].
When a row has both, the score wins and the response is kept as evidence. ``prediction`` is
accepted as another name for ``response``; a ``null`` response is an empty answer (the judge ran
and said nothing), which scores like any wrong answer. ``sample_id`` may be an int or a string
and is always handled as a string.

Every malformed line stops the read with the file, the line number and the fix (ARCHITECTURE.md
contract 4). Repeated rows for one (sample_id, model) are dropped and counted when they agree,
and are an error when they disagree.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.json_files import read_jsonl
from benchsmith.scoring.metrics import CUTOFF_TOLERANCE, Gold, MetricSpec, is_correct

UnknownPolicy = Literal["error", "ignore"]
ROW_FIX = (
    'write one JSON object per line: {"sample_id": 1, "model": "name", "response": "text"} '
    'or {"sample_id": 1, "model": "name", "score": 0.6}'
)
EXAMPLES_SHOWN = 5


@dataclass(frozen=True)
class JudgeRow:
    """One judge's answer for one sample, with where it was read from."""

    sample_id: str
    model: str
    response: str | None
    score: float | None
    path: str
    line: int

    @property
    def location(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass
class JudgeTable:
    """All judge rows, one per (sample_id, model), in file-and-line order."""

    rows: dict[tuple[str, str], JudgeRow]
    paths: list[str]
    identical_duplicates: int = 0

    @property
    def models(self) -> list[str]:
        return sorted({model for _, model in self.rows})

    def __len__(self) -> int:
        return len(self.rows)


def _fail(path: Path, line: int, problem: str, fix: str = ROW_FIX) -> BenchsmithError:
    return BenchsmithError(f"line {line}: {problem}", path=path, fix=fix)


def _sample_id(value: object, path: Path, line: int) -> str:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise _fail(path, line, f"sample_id must be an integer or a string, got {value!r}")
    text = str(value)
    if not text.strip():
        raise _fail(path, line, "sample_id is empty")
    return text


def _score(value: object, path: Path, line: int) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _fail(path, line, f"score must be a number, got {value!r}")
    if not 0 <= value <= 1:
        raise _fail(
            path,
            line,
            f"score {value!r} is outside [0, 1]",
            fix="write per-sample scores on a 0-1 scale (divide percentages by 100)",
        )
    return float(value)


def _response(row: dict, path: Path, line: int) -> str | None:
    """The answer text, from ``response`` or ``prediction``; ``None`` when neither key is there."""
    keys = [k for k in ("response", "prediction") if k in row]
    values = {k: row[k] for k in keys}
    for key, value in values.items():
        if value is not None and not isinstance(value, str):
            raise _fail(path, line, f"{key} must be a string or null, got {type(value).__name__}")
    if len(keys) == 2 and values["response"] != values["prediction"]:
        raise _fail(path, line, "response and prediction disagree", fix="keep one of the two keys")
    if not keys:
        return None
    return values[keys[0]] or ""


def parse_judge_row(row: object, path: Path, line: int) -> JudgeRow:
    """One parsed JSONL line as a :class:`JudgeRow`, or an error naming the line."""
    if not isinstance(row, dict):
        raise _fail(path, line, f"expected a JSON object, got {type(row).__name__}")
    missing = [key for key in ("sample_id", "model") if key not in row]
    if missing:
        raise _fail(path, line, f"missing key(s) {', '.join(missing)}")
    model = row["model"]
    if not isinstance(model, str) or not model.strip():
        raise _fail(path, line, f"model must be a non-empty string, got {model!r}")
    response = _response(row, path, line)
    score = None if row.get("score") is None else _score(row["score"], path, line)
    if score is None and response is None:
        raise _fail(path, line, "needs a 'response' (to score) or a 'score' (pre-scored)")
    return JudgeRow(
        _sample_id(row["sample_id"], path, line), model, response, score, str(path), line
    )


def read_judge_files(paths: Iterable[str | Path] | str | Path) -> JudgeTable:
    """Read judge prediction JSONL files (blank lines ignored) into one :class:`JudgeTable`."""
    path_list = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    if not path_list:
        raise BenchsmithError(
            "no judge prediction files given", fix="pass one or more judge JSONL files"
        )
    rows: dict[tuple[str, str], JudgeRow] = {}
    duplicates = 0
    for path in path_list:
        for number, value in read_jsonl(path, what="judge predictions", fix=ROW_FIX):
            row = parse_judge_row(value, path, number)
            key = (row.sample_id, row.model)
            first = rows.get(key)
            if first is None:
                rows[key] = row
            elif (first.response, first.score) == (row.response, row.score):
                duplicates += 1
            else:
                raise _fail(
                    path,
                    number,
                    f"sample_id {row.sample_id!r} of model {row.model!r} was already given "
                    f"different content at {first.location}",
                    fix="keep one row per (sample_id, model) in the judge files",
                )
    return JudgeTable(rows, [str(p) for p in path_list], duplicates)


@dataclass
class JudgeScores:
    """Per (sample_id, model) score and correctness (``score >= cutoff``), with counters.

    ``models`` are all judges present in the table, sorted. ``counters`` holds ``rows``,
    ``scored_by_metric``, ``prescored``, ``identical_duplicates``, ``unknown_sample_rows`` and
    ``unknown_sample_ids``.
    """

    scores: dict[tuple[str, str], float]
    correct: dict[tuple[str, str], bool]
    models: list[str]
    cutoff: float
    metric: str
    counters: dict[str, int] = field(default_factory=dict)
    unknown_sample_ids: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    tolerance: float = CUTOFF_TOLERANCE  # how far below the cutoff still counts

    def score(self, sample_id: str, model: str) -> float | None:
        return self.scores.get((str(sample_id), model))


def _as_spec(metric: MetricSpec | Callable, cutoff: float | None) -> MetricSpec:
    """A plain callable becomes a spec with ``cutoff`` (default 1.0: only perfect scores count)."""
    if isinstance(metric, MetricSpec):
        return metric.with_cutoff(cutoff)
    name = getattr(metric, "__name__", "custom")
    return MetricSpec(name, metric, 1.0).with_cutoff(cutoff)


def _unknown_error(unknown: list[JudgeRow]) -> BenchsmithError:
    ids = sorted({row.sample_id for row in unknown})
    shown = ", ".join(repr(i) for i in ids[:EXAMPLES_SHOWN])
    return BenchsmithError(
        f"{len(unknown)} judge row(s) name {len(ids)} sample id(s) the dataset does not have "
        f"(first at line {unknown[0].line}; ids: {shown}{', ...' if len(ids) > EXAMPLES_SHOWN else ''})",
        path=unknown[0].path,
        fix="check that the judge files belong to this dataset, or pass --unknown-ids ignore "
        "(`curate.judges.unknown_ids: ignore` in params.yaml) to count and skip such rows",
    )


def _metric_score(spec: MetricSpec, row: JudgeRow, gold: Gold) -> float:
    try:
        value = spec.fn(row.response or "", gold)
    except ValueError as exc:
        raise BenchsmithError(
            f"line {row.line}: cannot score sample {row.sample_id!r} with {spec.name}: {exc}",
            path=row.path,
            fix="give every sample a non-empty gold answer",
        ) from exc
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise BenchsmithError(
            f"metric {spec.name!r} returned {value!r} for sample {row.sample_id!r}",
            path=row.path,
            fix="use a per-sample metric that returns a score in [0, 1]",
        )
    return float(value)


def score_judges(
    table: JudgeTable,
    golds: Mapping[str, Gold],
    metric: MetricSpec | Callable,
    known_ids: Iterable[str],
    unknown_policy: UnknownPolicy = "error",
    cutoff: float | None = None,
) -> JudgeScores:
    """Score every row of ``table``; ``cutoff`` overrides the metric's (paper Table 8) cutoff.

    Rows for sample ids outside ``known_ids`` raise (``unknown_policy="error"``) or are counted
    and skipped (``"ignore"``). Response rows need a gold answer in ``golds``; pre-scored rows
    do not. A ``prescored_only`` metric (BLEU-4) rejects response rows.
    """
    if unknown_policy not in ("error", "ignore"):
        raise BenchsmithError(
            f"unknown_policy must be 'error' or 'ignore', got {unknown_policy!r}",
            fix="set --unknown-ids (curate.judges.unknown_ids) to error or ignore",
        )
    spec = _as_spec(metric, cutoff)
    known = {str(i) for i in known_ids}
    gold_by_id = {str(k): v for k, v in golds.items()}
    unknown = [row for row in table.rows.values() if row.sample_id not in known]
    if unknown and unknown_policy == "error":
        raise _unknown_error(unknown)
    scores: dict[tuple[str, str], float] = {}
    counters = {"rows": len(table.rows), "scored_by_metric": 0, "prescored": 0}
    for key, row in table.rows.items():
        if row.sample_id not in known:
            continue
        if row.score is not None:
            scores[key] = row.score
            counters["prescored"] += 1
            continue
        if spec.prescored_only:
            raise BenchsmithError(
                f"line {row.line}: metric {spec.name!r} needs a pre-computed 'score' on every row",
                path=row.path,
                fix=f'score the responses with a {spec.name} scorer and write {{"score": ...}}',
            )
        if row.sample_id not in gold_by_id:
            raise BenchsmithError(
                f"line {row.line}: no gold answer for sample {row.sample_id!r}",
                path=row.path,
                fix="pass the gold answers of every sample the judges answered",
            )
        scores[key] = _metric_score(spec, row, gold_by_id[row.sample_id])
        counters["scored_by_metric"] += 1
    unknown_ids = sorted({row.sample_id for row in unknown})
    counters.update(
        identical_duplicates=table.identical_duplicates,
        unknown_sample_rows=len(unknown),
        unknown_sample_ids=len(unknown_ids),
    )
    return JudgeScores(
        scores=scores,
        correct={
            key: is_correct(value, spec.cutoff, spec.tolerance) for key, value in scores.items()
        },
        models=table.models,
        cutoff=spec.cutoff,
        metric=spec.name,
        counters=counters,
        unknown_sample_ids=unknown_ids,
        paths=list(table.paths),
        tolerance=spec.tolerance,
    )
