"""MULTI's scorer: the paper's points, with breakdowns, a legacy mode and a random baseline.

Default policy (:mod:`benchsmith.scoring.multi_points`): SA 1 point; MA one point per correct
letter and zero if any wrong letter is chosen, plus MA exact accuracy (MA-Acc); FB one point per
blank with the ``或`` alternatives; OP ROUGE-L over jieba tokens; Other not scored. Replies are
read after removing ``<think>`` blocks and unwrapping ``\\boxed{}``, and "The answer is B"
counts. A rejection (缺少图片信息, "image is missing") scores 0 and is reported. The score is
points earned over points possible, summed over what was asked (no hard-coded denominators),
overall and by level (JuH, SeH, Uni, Driving, AAT), image class (NI, SI, MI) and type.

``--legacy`` reproduces the official ``eval/metrics.py`` per question (its cleanup: text after
the last blank line, ``答案：`` and the like removed; SA the first or last ASCII letter by
``--answer-position``; MA a run of letters; FB exact lines; the same ROUGE-L), which
``scripts/check_multi_legacy.py`` checks against the official script, question by question.

Predictions: JSONL, one ``{"question_id": ..., "response": ...}`` per line (``id`` and
``prediction`` are accepted too), or the official JSON ``{qid: {"prediction": ...}}``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.base import ScoreOption, Scorer, class_label_names, read_gold_table
from benchsmith.scoring.multi_legacy import POSITIONS, legacy_score
from benchsmith.scoring.multi_points import QuestionScore, score_question
from benchsmith.scoring.predictions import prediction_lines

SPLIT = "test"
LABELS = ("education", "track", "question_type", "image_class")
GOLD_COLUMNS = ["question_id", *LABELS, "options", "answer", "points", "text"]
CHINESE_TYPES = {"SA": "单选", "MA": "多选", "FB": "填空", "OP": "解答", "Other": "其他"}
_FIX = 'write one JSON object per line: {"question_id": "czsx_0_0", "response": "B"}'


def load_gold(dataset_dir: Path, config: str) -> list[dict[str, Any]]:
    rows = read_gold_table(dataset_dir, config, SPLIT, GOLD_COLUMNS).to_pylist()
    names = {c: class_label_names(dataset_dir, config, c) for c in LABELS}
    for row in rows:
        for column in LABELS:
            row[column] = names[column][row[column]]
        row["level"] = row["track"] if row["education"] == "Society" else row["education"]
        row["option_texts"] = [o["text"] for o in row["options"] or []]
    return rows


def read_predictions(path: Path, known: set[str], strict: bool) -> tuple[dict[str, str | None],
                                                                         int]:  # fmt: skip
    """question id -> reply, and the number of rows naming no question of this config."""
    rows: list[tuple[int, Any]]
    text = path.read_text(encoding="utf-8") if path.suffix == ".json" and path.is_file() else ""
    if text.lstrip().startswith("{") and "\n{" not in text.strip():
        try:
            official = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BenchsmithError(f"not valid JSON: {exc}", path=path, fix=_FIX) from exc
        rows = [(0, {"question_id": k, **(v if isinstance(v, dict) else {"prediction": v})})
                for k, v in official.items()]  # fmt: skip
    else:
        rows = list(prediction_lines(path, _FIX))
    out: dict[str, str | None] = {}
    unknown = 0
    for number, row in rows:
        if not isinstance(row, dict):
            raise BenchsmithError(f"line {number}: not a JSON object", path=path, fix=_FIX)
        qid = row.get("question_id", row.get("id", row.get("sample_id")))
        reply = row.get("response", row.get("prediction"))
        if not isinstance(qid, str) or not qid:
            raise BenchsmithError(f"line {number}: question_id must be a non-empty string",
                                  path=path, fix=_FIX)  # fmt: skip
        if reply is not None and not isinstance(reply, str):
            raise BenchsmithError(f"line {number}: response must be a string or null",
                                  path=path, fix=_FIX)  # fmt: skip
        if qid not in known:
            if strict:
                raise BenchsmithError(f"line {number}: {qid!r} is not a question of this config",
                                      path=path, fix="drop --strict-ids or fix the ids")  # fmt: skip
            unknown += 1
            continue
        if qid in out:
            raise BenchsmithError(f"line {number}: second row for {qid!r}", path=path,
                                  fix="keep one row per question")  # fmt: skip
        out[qid] = reply
    return out, unknown


def score_one(row: dict[str, Any], reply: str | None, legacy: bool, position: str) -> QuestionScore:
    if legacy:
        points, possible, rejected = legacy_score(reply or "", row["answer"],
                                                  CHINESE_TYPES[row["question_type"]], position)  # fmt: skip
        return QuestionScore(float(points), float(possible), bool(possible) and points == possible,
                             rejected=rejected)  # fmt: skip
    return score_question(reply, row["answer"] or "", row["question_type"], row["option_texts"])


def _block(scores: list[QuestionScore]) -> dict[str, Any]:
    points = sum(s.points for s in scores)
    possible = sum(s.possible for s in scores)
    return {"score": round(points / possible, 6) if possible else None, "points": round(points, 6),
            "possible": possible, "questions": len(scores),
            "correct": sum(s.exact and s.possible > 0 for s in scores)}  # fmt: skip


DENOMINATOR = (
    "possible counts every question of the config, a question with no prediction included "
    "(it earns 0); possible_answered counts only the questions with a prediction, as the "
    "original script's total does, and score_answered is points over it"
)


def _answered_only(scores: dict[str, QuestionScore], replies: dict[str, Any]) -> dict[str, Any]:
    """The total's two denominators side by side: ours (every question asked) and the
    original's (only the questions a prediction answers)."""
    answered = [s for q, s in scores.items() if q in replies]
    possible = sum(s.possible for s in answered)
    points = sum(s.points for s in answered)
    return {"possible_answered": possible,
            "score_answered": round(points / possible, 6) if possible else None,
            "denominator": DENOMINATOR}  # fmt: skip


def score_multi(dataset_dir: Path, config: str, predictions_path: Path, *, legacy: bool = False,
                answer_position: str = "start", strict: bool = False) -> dict[str, Any]:  # fmt: skip
    gold = load_gold(Path(dataset_dir), config)
    if answer_position not in POSITIONS:
        raise BenchsmithError(f"--answer-position must be one of {POSITIONS}",
                              fix="use start (the script's default) or end (its README's)")  # fmt: skip
    replies, unknown = read_predictions(Path(predictions_path), {r["question_id"] for r in gold},
                                        strict)  # fmt: skip
    scores: dict[str, QuestionScore] = {}
    for row in gold:
        scores[row["question_id"]] = score_one(row, replies.get(row["question_id"]), legacy,
                                               answer_position)  # fmt: skip
    groups: dict[str, dict[str, list[QuestionScore]]] = {k: defaultdict(list) for k in
                                                         ("level", "image_class", "question_type")}  # fmt: skip
    for row in gold:
        for key, bucket in groups.items():
            bucket[row[key]].append(scores[row["question_id"]])
    ma = [scores[r["question_id"]] for r in gold if r["question_type"] == "MA"]
    scored = [s for s in scores.values() if s.possible > 0]
    return {
        "config": config,
        "mode": "legacy" if legacy else "default",
        "answer_position": answer_position if legacy else None,
        "accuracy_unit": "fraction",
        "overall": {
            **_block(list(scores.values())),
            **_answered_only(scores, replies),
        },  # fmt: skip
        "per_level": {k: _block(v) for k, v in sorted(groups["level"].items())},
        "per_image_class": {k: _block(v) for k, v in sorted(groups["image_class"].items())},
        "per_type": {k: _block(v) for k, v in sorted(groups["question_type"].items())},
        "ma_accuracy": sum(s.exact for s in ma) / len(ma) if ma else None,
        "rejected": sum(s.rejected for s in scores.values()),
        "unparsed": sum(s.unparsed for s in scored),
        "not_scored": sum(s.possible == 0 for s in scores.values()),
        "missing": sum(r["question_id"] not in replies for r in gold),
        "unknown_ids": unknown,
        "per_question": {q: [round(s.points, 6), s.possible] for q, s in scores.items()},
    }


RANDOM_BLANK_TOKENS = ("A", "B", "C", "D", "1", "2", "3", "4", "True", "False")


def random_reply(row: dict[str, Any], rng: np.random.Generator) -> str:
    """The paper's random baseline: a uniform SA pick; each MA option kept with probability
    1/2 (at least one); FB a random token per blank; OP the question echoed."""
    labels = [chr(65 + k) for k in range(len(row.get("option_texts") or []))]
    kind = row["question_type"]
    if kind == "SA" and labels:
        return str(rng.choice(labels))
    if kind == "MA" and labels:
        kept = [label for label in labels if rng.random() < 0.5]
        return "".join(kept or [str(rng.choice(labels))])
    if kind == "FB":
        blanks = max(1, int(row.get("points") or 1))
        return "\n".join(str(rng.choice(RANDOM_BLANK_TOKENS)) for _ in range(blanks))
    return str(row.get("text") or "")


class MultiScorer(Scorer):
    family = "multi"
    summary = "points per the paper (SA, MA partial, FB blanks, OP ROUGE-L), breakdowns, legacy"
    headline = "overall.score"
    description = __doc__.split("\n\n", 1)[1]
    options = (
        ScoreOption("--legacy", "reproduce the official MULTI eval/metrics.py per question"),
        ScoreOption(
            "--answer-position",
            "legacy SA/MA: take the first (start, the script's "
            "default) or last (end, its README's) letters",
            choices=POSITIONS,
            default="start",
        ),  # fmt: skip
    )

    def score_file(self, dataset_dir: Path, config: str, predictions: Path, *,
                   legacy: bool = False, answer_position: str = "start",
                   strict_ids: bool = False, **_: Any) -> dict[str, Any]:  # fmt: skip
        return score_multi(dataset_dir, config, predictions, legacy=legacy,
                           answer_position=answer_position or "start", strict=strict_ids)  # fmt: skip

    def question_points(
        self, rows: list[dict[str, Any]], predictions: Path
    ) -> dict[str, tuple[float, float]]:
        """Question id -> (points, possible) of one run (a missing reply scores 0)."""
        replies, _ = read_predictions(Path(predictions), {r["question_id"] for r in rows},
                                      strict=False)  # fmt: skip
        out = {}
        for row in rows:
            options = [o["text"] for o in row["options"] or []]
            result = score_question(replies.get(row["question_id"]), row["answer"] or "",
                                    row["question_type"], options)  # fmt: skip
            out[row["question_id"]] = (result.points, result.possible)
        return out

    def sample_score(self, row: dict[str, Any], response: str) -> float:
        names = {"question_type": ("SA", "MA", "FB", "OP", "Other")}
        kind = row["question_type"]
        kind = names["question_type"][kind] if isinstance(kind, int) else kind
        options = [o["text"] for o in row.get("options") or []]
        result = score_question(response, row.get("answer") or "", kind, options)
        return float(result.possible > 0 and result.points == result.possible)

    def reference_predictions(
        self, dataset_dir: Path, config: str, response: str | None = None
    ) -> list[dict[str, Any]]:
        table = read_gold_table(dataset_dir, config, SPLIT, ["question_id", "answer"])
        return [{"question_id": r["question_id"],
                 "response": (r["answer"] or "") if response is None else response}
                for r in table.to_pylist()]  # fmt: skip


MULTI_SCORER = MultiScorer()
