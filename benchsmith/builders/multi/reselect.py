"""``benchsmith build multi elite``: score judge runs against a plan and re-draw Elite from them.

Each ``--run NAME=FILE`` is scored with MULTI's scorer (:mod:`benchsmith.scoring.multi_points`)
against the plan's questions; a run's weight is its own overall score in percent, as the
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


def score_run(rows: list[dict], path: Path) -> dict[str, tuple[float, float]]:
    """question id -> (points, possible) of one run (a missing reply scores 0)."""
    from benchsmith.scoring.multi import read_predictions
    from benchsmith.scoring.multi_points import score_question

    replies, _ = read_predictions(path, {r["question_id"] for r in rows}, strict=False)
    out = {}
    for row in rows:
        options = [o["text"] for o in row["options"] or []]
        result = score_question(replies.get(row["question_id"]), row["answer"] or "",
                                row["question_type"], options)  # fmt: skip
        out[row["question_id"]] = (result.points, result.possible)
    return out


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
                       seed: int, out: Path) -> list[str]:  # fmt: skip
    plan = QuestionsDir.read(plan_dir, "select")
    rows = list(plan.rows())
    runs = parse_runs(run_flags)
    unknown = sorted(set(text_only) - set(runs))
    if unknown:
        raise BenchsmithError(f"--text-only names no --run: {unknown}", fix="use the run names")
    results = {name: score_run(rows, path) for name, path in runs.items()}
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
    return drawn
