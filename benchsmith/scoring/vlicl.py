"""Score VL-ICL predictions against one published task config (its ``query`` split).

A predictions JSONL holds one row per (query, shot count, seed):
``{"query_id": "clevr/query/00007", "n_shot": 4, "seed": 0, "response": "3"}``
(``id`` is accepted for ``query_id``, ``seed`` defaults to 0, ``response`` may be ``null``,
extra keys are ignored). The gold answer is the ``answer`` column of the query row with that
id; only the ``id``, ``task`` and ``answer`` columns are read, images are never decoded.

Policy, chosen so that a score cannot be inflated by leaving rows out:

- accuracy is a **fraction in [0, 1]** (the paper prints percentages: multiply by 100);
- every (shot count, seed) pair that occurs in the predictions is scored over **every** query of
  the config: an absent row or a ``null`` response counts as wrong and is reported as
  ``missing`` (in ``legacy`` mode too, where the original would crash or drop it);
- ``per_shot[n].accuracy`` pools the seeds; because each seed has the same denominator it equals
  ``mean_over_seeds`` (the paper's 3-seed mean); ``std_over_seeds`` is the sample standard
  deviation across seeds and ``stderr`` the binomial ``sqrt(p(1-p)/n)`` over all scored rows;
- ``overall`` pools every scored (shot, seed, query) row;
- rows whose id is not a query of the config are counted in ``unknown_ids`` and ignored
  (``strict=True`` makes them an error); a repeated (query, shot, seed) row is an error;
- ``unparsed`` counts responses in which the fixed-mode extraction finds no answer at all
  (reported in both modes, to spot prompt-format problems).

Answer matching is in :mod:`benchsmith.scoring.vlicl_normalise` (modes ``fixed`` and ``legacy``).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.base import ScoreOption, Scorer, rate, read_gold_table
from benchsmith.scoring.vlicl_normalise import (
    MODES,
    TASK_KINDS,
    TEXT_TO_IMAGE_TASKS,
    Matcher,
    Mode,
    is_unparsed,
    matcher,
    task_kind,
)
from benchsmith.scoring.vlicl_predictions import read_predictions, select_runs

GOLD_COLUMNS = ["id", "task", "answer"]
QUERY_SPLIT = "query"


@dataclass(frozen=True)
class GoldQuery:
    """One query row, reduced to what scoring needs."""

    query_id: str
    task: str
    answer: str


def _check_gold_row(row: dict[str, Any], path: Path) -> GoldQuery:
    """Fail loudly on a row the published contract does not allow, naming the config folder."""
    qid, task, answer = row["id"], row["task"], row["answer"]
    problem = None
    if not isinstance(qid, str) or not qid:
        problem = f"query id {qid!r} is not a non-empty string"
    elif not isinstance(task, str) or task_kind(task) is None:
        problem = f"{qid}: task {task!r} has no scorer (supported: {', '.join(TASK_KINDS)})"
    elif not isinstance(answer, str):
        problem = f"{qid}: answer {answer!r} is not a string"
    else:
        kind = task_kind(task)
        text = answer.strip()
        if kind == "operator" and not text.lstrip("-").isdigit():
            problem = f"{qid}: operator answer {answer!r} is not an integer"
        elif kind == "count" and not text.isdigit():
            problem = f"{qid}: CLEVR answer {answer!r} is not a non-negative integer"
        elif kind == "yes_no" and text.lower() not in {"yes", "no"}:
            problem = f"{qid}: matching answer {answer!r} is not Yes or No"
    if problem:
        raise BenchsmithError(problem, path=path, fix="rebuild and republish this config")
    return GoldQuery(qid, task, answer)


def load_gold(dataset_dir: str | Path, config: str) -> list[GoldQuery]:
    """Read the columns id, task, answer of ``DATASET_DIR/data/<config>/query-*.parquet``."""
    table = read_gold_table(dataset_dir, config, QUERY_SPLIT, GOLD_COLUMNS)
    config_dir = Path(dataset_dir) / "data" / config
    golds = [_check_gold_row(row, config_dir) for row in table.to_pylist()]
    seen: set[str] = set()
    for gold in golds:
        if gold.query_id in seen:
            raise BenchsmithError(
                f"duplicate query id {gold.query_id!r}", path=config_dir, fix="republish"
            )
        seen.add(gold.query_id)
    return golds


@dataclass
class RunTally:
    """One (shot count, seed) run's counts, or several pooled (the image judge adds to it)."""

    correct: int = 0
    n: int = 0
    missing: int = 0
    unparsed: int = 0

    def add(self, other: RunTally) -> None:
        self.correct += other.correct
        self.n += other.n
        self.missing += other.missing
        self.unparsed += other.unparsed


def _score_run(
    golds: list[GoldQuery],
    responses: dict[str, str | None],
    matchers: dict[str, Matcher],
) -> RunTally:
    """One (shot, seed) run over every query of the config."""
    tally = RunTally(n=len(golds))
    for gold in golds:
        response = responses.get(gold.query_id)
        if response is None:
            tally.missing += 1
            continue
        tally.unparsed += is_unparsed(gold.task, response)
        tally.correct += matchers[gold.task](response, gold.answer)
    return tally


def _shot_block(per_seed: dict[int, RunTally]) -> dict[str, Any]:
    pooled = RunTally()
    for tally in per_seed.values():
        pooled.add(tally)
    accuracy, stderr = rate((pooled.correct, pooled.n))
    seed_accuracies = [t.correct / t.n for t in per_seed.values()]  # n = queries > 0
    return {
        "accuracy": accuracy,
        "n": pooled.n,
        "correct": pooled.correct,
        "stderr": stderr,
        "missing": pooled.missing,
        "unparsed": pooled.unparsed,
        "mean_over_seeds": statistics.fmean(seed_accuracies),
        "std_over_seeds": statistics.stdev(seed_accuracies) if len(seed_accuracies) > 1 else None,
        "per_seed": {
            str(seed): {
                "accuracy": rate((t.correct, t.n))[0],
                "n": t.n,
                "correct": t.correct,
                "missing": t.missing,
                "unparsed": t.unparsed,
            }
            for seed, t in sorted(per_seed.items())
        },
    }


def score_vlicl(
    dataset_dir: str | Path,
    config: str,
    predictions_path: str | Path,
    *,
    shots: int | Sequence[int] | None = None,
    mode: Mode = "fixed",
    strict: bool = False,
) -> dict[str, Any]:
    """Score one config; returns a JSON-serialisable report (see the module docstring).
    ``shots``: the shot counts to score (one or several; None: every one present)."""
    if mode not in MODES:
        raise BenchsmithError(f"unknown mode {mode!r}", fix=f"use one of {', '.join(MODES)}")
    wanted = None if shots is None else sorted({shots} if isinstance(shots, int) else set(shots))
    if wanted is not None and (not wanted or wanted[0] < 0):
        raise BenchsmithError(f"--shots {shots} is not a list of shot counts",
                              fix="pass shot counts like 0 or 0 4")  # fmt: skip
    path = Path(predictions_path)
    golds = load_gold(dataset_dir, config)
    all_rows = read_predictions(path)
    rows = all_rows if wanted is None else [row for row in all_rows if row.n_shot in wanted]
    runs, unknown = select_runs(rows, {g.query_id for g in golds}, path, strict)
    if not all_rows:  # an empty file the caller chose to score (--allow-empty): all missing
        runs = {(wanted[0] if wanted else 0, 0): {}}
    if not runs:
        what = f"with n_shot {' or '.join(map(str, wanted))} " if wanted is not None else ""
        raise BenchsmithError(
            f"no prediction {what}matches a query of config {config!r} "
            f"({unknown} rows with unknown ids)",
            path=path,
            fix="check --config, --shots and the query_id values"
            + (f" (e.g. {golds[0].query_id!r})" if golds else ""),
        )
    matchers = {task: matcher(task, mode) for task in {g.task for g in golds}}
    by_shot: dict[int, dict[int, RunTally]] = defaultdict(dict)
    for (n_shot, seed), responses in sorted(runs.items()):
        by_shot[n_shot][seed] = _score_run(golds, responses, matchers)
    overall = RunTally()
    for per_seed in by_shot.values():
        for tally in per_seed.values():
            overall.add(tally)
    accuracy, stderr = rate((overall.correct, overall.n))
    return {
        "config": config,
        "tasks": sorted(matchers),
        "mode": mode,
        "strict": strict,
        "shots": wanted if wanted is None or len(wanted) > 1 else wanted[0],
        "accuracy_unit": "fraction",
        "n_queries": len(golds),
        "overall": {
            "accuracy": accuracy,
            "n": overall.n,
            "correct": overall.correct,
            "stderr": stderr,
        },
        "per_shot": {str(n): _shot_block(per_seed) for n, per_seed in sorted(by_shot.items())},
        "missing": overall.missing,
        "unparsed": overall.unparsed,
        "unknown_ids": unknown,
    }


class VliclScorer(Scorer):
    family = "vlicl"
    summary = "accuracy per shot count of the VL-ICL task configs (query split)"
    headline = "overall.accuracy"
    description = """\
Configs: open_mi, matching_mi, clevr, operator_induction, operator_induction_interleaved and
the text variants (clevr_text, operator_induction_text, operator_induction_interleaved_text and
their *_text_image_query forms, scored as their image task; --legacy follows the original's
names for them: clevr_simple_text takes the first number, math_induction_text* whole answers),
their query split. open_t2i_mi (text to image) is judged: see below.

Predictions: JSONL, one object per line,
  {"query_id": "clevr/query/00007", "n_shot": 4, "seed": 0, "response": "3"}
"id" is accepted for "query_id", "seed" defaults to 0, "response" may be null, extra keys are
ignored. Gold is the "answer" column of the query row with that id.

Report: accuracy as a FRACTION in [0, 1] (the paper prints percent), "overall" pooled over every
scored row and "per_shot" per shot count, each with n, correct and the binomial stderr
sqrt(p(1-p)/n); per shot also "per_seed", "mean_over_seeds" (the paper's 3-seed mean; equal to the
pooled accuracy since every seed has the same denominator) and "std_over_seeds".
Every (n_shot, seed) present in the predictions is scored over EVERY query of the config: an
absent row or a null response counts as wrong ("missing"). "unparsed" counts responses in which the
default extraction finds no answer at all. Ids, duplicates and empty files: see "Predictions
files" above.

Normalisation (as in the original evals/eval.py): strip the response, cut it at the first newline,
otherwise at the first "." that is not at position 0. Then, by task (default, fixed):
  operator_induction*  first SIGNED integer (-?\\d+), compared as integers ("-5" can match)
  clevr                first integer or number word zero..twenty ("3 objects", "three" -> 3),
                       with its sign ("-2" is not 2)
  hedges               two different numbers offered as alternatives are wrong: "2 or 3",
                       "2-3", "2 to 3", "2/3", "between 2 and 3" (operators: only "or" and
                       "between .. and", since - and / are arithmetic there)
  open_mi              case-insensitive, ignoring quotes, trailing punctuation, an echoed
                       "This is" and a leading article: "A dax." and "This is a dax" -> dax
  matching_mi          the first standalone yes/no word decides; an empty or yes/no-less answer
                       is wrong for Yes- and No-items alike

--legacy reproduces the original matching, for comparison with the paper:
operators take the first unsigned \\d+ (negative answers can never match), clevr and open_mi
need an exact (case-insensitive) match ("3 objects", "a dax" are wrong), and a matching No-item
is correct whenever "yes" does not occur, so an empty answer is a correct "No". Null responses
and absent rows still count as wrong in this mode.

Text-to-image configs (open_t2i_mi): "response" is the generated image's path, relative to the
predictions file, as `benchsmith predict` writes it (FILE-images/<sha256>.png, checked against
its name and the row's "image_sha256"). --judge-model names a vision model (--judge-base-url,
else $OPENAI_BASE_URL) that is shown each image and asked "Does this image show {class}? Answer
with one word: yes or no."; its first word decides (anything else: wrong, "unparsed"). The class
is the query's real class name, not the made-up word. Judge answers are cached (--llm-cache),
so scoring again sends nothing; the report's "judge" block records the model, prompt and rule.
--legacy asks the original's prompt ("Decide whether the image contains {answer}. Answer with
'yes' or 'no'.") with 5 tokens and passes any reply containing "yes". CoBSAT-style golds of two
values (latent, non-latent) are judged twice and pass only when both do ("latent" and
"non_latent" accuracies reported beside it).
"""
    options = (
        ScoreOption(
            "--shots",
            "score only the rows with these n_shot values (default: every shot count present)",
            type=int,
            metavar="K",
            multiple=True,
        ),
        ScoreOption(
            "--legacy",
            "reproduce the original eval.py matching instead of the fixed one",
            keyword="legacy_normalisation",
        ),
        ScoreOption("--judge-model", "text-to-image configs: the vision model that judges each "
                    "generated image (required for them)", type=str, metavar="MODEL"),
        ScoreOption("--judge-base-url", "the judge's OpenAI-compatible server (else "
                    "$OPENAI_BASE_URL; key from $OPENAI_API_KEY)", type=str, metavar="URL"),
        ScoreOption("--llm-cache", "the judge's reply cache (default .benchsmith/llm-cache)",
                    type=str, metavar="DIR", keyword="judge_cache"),
    )  # fmt: skip

    def score_file(
        self,
        dataset_dir: Path,
        config: str,
        predictions: Path,
        *,
        shots: int | Sequence[int] | None = None,
        legacy_normalisation: bool = False,
        strict_ids: bool = False,
        judge_model: str | None = None,
        judge_base_url: str | None = None,
        judge_cache: str | None = None,
        **_: Any,
    ) -> dict[str, Any]:
        mode = "legacy" if legacy_normalisation else "fixed"
        if config in TEXT_TO_IMAGE_TASKS:
            if not judge_model:
                raise BenchsmithError(f"{config} is {self.unscorable(config)}", path=dataset_dir,
                                      fix="pass --judge-model MODEL (and --judge-base-url URL)")  # fmt: skip
            from benchsmith.scoring.vlicl_judge import JudgeSettings, score_vlicl_images

            cache = Path(judge_cache) if judge_cache else Path(".benchsmith/llm-cache")
            judge = JudgeSettings(judge_model, judge_base_url, cache_dir=cache)
            wanted = None if shots is None else ([shots] if isinstance(shots, int) else shots)
            return score_vlicl_images(dataset_dir, config, predictions, judge, shots=wanted,
                                      mode=mode, strict=strict_ids)  # fmt: skip
        if judge_model or judge_base_url:
            raise BenchsmithError(f"--judge-model and --judge-base-url apply to text-to-image "
                                  f"configs, and {config!r} is answered with text",
                                  fix="drop --judge-model and --judge-base-url")  # fmt: skip
        return score_vlicl(
            dataset_dir,
            config,
            predictions,
            shots=shots,
            mode=mode,
            strict=strict_ids,
        )

    def unscorable(self, config: str) -> str | None:
        if config in TEXT_TO_IMAGE_TASKS:
            return ("a text-to-image task: its answers are generated images, which a vision "
                    "model judges (--judge-model)")  # fmt: skip
        return None

    def sample_score(self, row: dict[str, Any], response: str) -> float:
        gold = _check_gold_row(row, Path("<row>"))
        return float(matcher(gold.task)(response, gold.answer))

    def reference_predictions(
        self, dataset_dir: Path, config: str, response: str | None = None
    ) -> list[dict[str, Any]]:
        """Zero-shot, seed 0: one row per query."""
        return [
            {
                "query_id": g.query_id,
                "n_shot": 0,
                "seed": 0,
                "response": g.answer if response is None else response,
            }
            for g in load_gold(dataset_dir, config)
        ]


VLICL_SCORER = VliclScorer()
