"""``benchsmith build multi elite``: score judge runs against a plan and re-draw Elite from them.

Each ``--run NAME=FILE`` is scored with MULTI's scorer (``Scorer.question_points``: the CLI
scores the runs the step asks for, so the family never imports the scoring package) against the
plan's questions; a run's weight is its own overall score in percent, as the
authors' notebook weighted GPT-4V by 63.7 and so on. The draw itself is
:func:`benchsmith.builders.multi.elite.reselect_elite`. The hard list is written in the
release's format, with a report beside it (``<out>.report.json``) naming the runs, weights,
buckets and seed.
"""

from __future__ import annotations

from pathlib import Path

from benchsmith.builders.multi.elite import reselect_elite
from benchsmith.builders.multi.plan import QuestionsDir
from benchsmith.core.atomic import atomic_write_json
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.progress import log
from benchsmith.family.base import ScoreRunsRequest


def parse_runs(values: list[str]) -> dict[str, Path]:
    runs = {}
    for value in values:
        name, sep, file = value.partition("=")
        if not sep or not name or not file:
            raise BenchsmithError(f"--run {value!r} is not NAME=FILE",
                                  fix="e.g. --run gpt4v=runs/gpt4v.jsonl")  # fmt: skip
        if name in runs:
            raise BenchsmithError(f"run {name!r} given twice", fix="give each run once")
        runs[name] = Path(file)
    return runs


def reselect_from_runs(plan_dir: Path, run_flags: list[str], text_only: list[str], size: int,
                       seed: int, out: Path) -> ScoreRunsRequest:  # fmt: skip
    """The runs to score (by MULTI's scorer, through the CLI), then the draw from their
    scores."""
    plan = QuestionsDir.read(plan_dir, "select")
    rows = list(plan.rows())
    runs = parse_runs(run_flags)
    unknown = sorted(set(text_only) - set(runs))
    if unknown:
        raise BenchsmithError(f"--text-only names no --run: {unknown}", fix="use the run names")

    def draw(results: dict[str, dict[str, tuple[float, float]]]) -> int:
        weights = {}
        for name, scores in results.items():
            possible = sum(p for _, p in scores.values())
            weights[name] = round(100 * sum(s for s, _ in scores.values()) / possible, 4) if (
                possible) else 0.0  # fmt: skip
        drawn, report = reselect_elite(rows, results, weights, text_only, size, seed)
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(out, drawn)
        atomic_write_json(out.with_name(out.stem + ".report.json"),
                          {**report, "plan": str(plan.path), "note": "a re-selection from these "
                           "runs, not the published MULTI-Elite list"})  # fmt: skip
        log(f"multi elite: {len(drawn)} of {report['candidates']} candidates drawn (seed {seed}) "
            f"-> {out}; use it with multi.elite.mode: file, multi.elite.hard_list: {out}")  # fmt: skip
        return 0

    return ScoreRunsRequest("multi", rows, runs, draw)
