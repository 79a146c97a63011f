"""The predictions file of a VL-ICL run: one row per (query, shot count, seed).

``{"query_id": "clevr/query/00007", "n_shot": 4, "seed": 0, "response": "3"}`` (``id`` is
accepted for ``query_id``, ``seed`` defaults to 0, ``response`` may be ``null``; a text-to-image
row adds ``image_sha256`` and its response is the image's path). Read and grouped here, once,
for the text scorer (:mod:`.vlicl`) and the image judge (:mod:`.vlicl_judge`), so both refuse
the same malformed lines and repeated rows the same way.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.predictions import prediction_lines

_PREDICTIONS_FIX = (
    'write one JSON object per line: {"query_id": "clevr/query/00000", "n_shot": 2, '
    '"seed": 0, "response": "3"}'
)


@dataclass(frozen=True)
class PredictionRow:
    """One validated predictions line; ``line`` is 1-based, for error messages."""

    query_id: str
    n_shot: int
    seed: int
    response: str | None
    line: int
    image_sha256: str | None = None  # a generated image's hash (text-to-image predictions)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _parse_line(row: Any, number: int, path: Path) -> PredictionRow:
    def fail(message: str) -> BenchsmithError:
        return BenchsmithError(f"line {number}: {message}", path=path, fix=_PREDICTIONS_FIX)

    if not isinstance(row, dict):
        raise fail("not a JSON object")
    qid = row.get("query_id", row.get("id"))
    if not isinstance(qid, str) or not qid:
        raise fail("query_id (or id) must be a non-empty string")
    n_shot, seed = row.get("n_shot"), row.get("seed", 0)
    if not _is_int(n_shot) or n_shot < 0:
        raise fail(f"n_shot must be a non-negative integer, got {n_shot!r}")
    if not _is_int(seed):
        raise fail(f"seed must be an integer, got {seed!r}")
    if "response" not in row:
        raise fail("no 'response' key")
    response = row["response"]
    if response is not None and not isinstance(response, str):
        raise fail("response must be a string or null")
    sha = row.get("image_sha256")
    return PredictionRow(qid, n_shot, seed, response, number, sha if isinstance(sha, str) else None)


def read_predictions(path: str | Path) -> list[PredictionRow]:
    """Validate every line of a predictions JSONL (blank lines are skipped)."""
    path = Path(path)
    return [
        _parse_line(data, number, path) for number, data in prediction_lines(path, _PREDICTIONS_FIX)
    ]


def select_runs(
    rows: list[PredictionRow], known: set[str], path: Path, strict: bool
) -> tuple[dict[tuple[int, int], dict[str, str | None]], int]:
    """Group known rows by (n_shot, seed); count unknown ids (an error when ``strict``).

    A second row for the same (query, shot, seed) is always an error naming both lines: which
    of two answers counts is not the scorer's to guess (the same rule in every family).
    """
    runs: dict[tuple[int, int], dict[str, str | None]] = defaultdict(dict)
    lines: dict[tuple[int, int, str], int] = {}
    unknown = 0
    for row in rows:
        if row.query_id not in known:
            if strict:
                raise BenchsmithError(
                    f"line {row.line}: {row.query_id!r} is not a query of this config",
                    path=path,
                    fix="score each config with its own predictions, or drop --strict-ids",
                )
            unknown += 1
            continue
        key = (row.n_shot, row.seed, row.query_id)
        if key in lines:
            raise BenchsmithError(
                f"line {row.line}: second row for {row.query_id!r} (n_shot {row.n_shot}, "
                f"seed {row.seed}); the first is line {lines[key]}",
                path=path,
                fix="keep one row per (query_id, n_shot, seed)",
            )
        lines[key] = row.line
        runs[(row.n_shot, row.seed)][row.query_id] = row.response
    return dict(runs), unknown
