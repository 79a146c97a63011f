"""Score MMIU predictions: letter extraction, per-task, per-relationship and overall accuracy.

Predictions: JSONL, ``{"id": "3d_pose_estimation_00003", "response": "B"}`` (``sample_id`` is
accepted for ``id``; ``model`` is read in ``--legacy`` mode). Gold: the published ``answer``
letter; only the text columns are read, never the images.

Default policy (:func:`benchsmith.options.option_letters.extract_letter`): the reply read as
models write it (full-width forms, ``<think>`` blocks, chat prefixes, Markdown and LaTeX
wrappers), then an exact letter, the letter after the last English or Chinese answer cue, a
leading or a bracketed letter, a unique option text on word boundaries; a refusal is counted
as such; then (``--judge-model``) an LLM judge through the one client
(cached replies, the model recorded in the report); anything else is wrong and counted as
unparsed. Every sample of the config is scored: a missing row or a null response is wrong.
Accuracy per task; a relationship's score is the mean of its tasks' accuracies and the overall
score the mean of per-task accuracies, as the paper computes them. The ``circular`` config
scores an item right only when every rotation of its options is answered right.

``--legacy`` reproduces the official ``evaluate.py`` + ``evaluate_correct.py`` per sample: the
reply is stripped of NBSP and of ``. , ( )`` at its ends; its failure strings become ``Z``; a
single letter a-n is kept as is; anything else goes to the judge with the official matching
prompt (``gpt-4o-mini`` unless ``--judge-model`` says otherwise), whose stripped reply is the
choice; a judge error drops the sample from the denominator (as "GPT error" did); and a choice
is right when it is a *substring* of the gold letter (so an empty choice is right). Without a
judge, replies that need one are dropped from the denominator and counted (``needs_judge``).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.options.option_letters import extract_letter
from benchsmith.scoring.base import (
    ScoreOption,
    Scorer,
    class_label_names,
    rate,
    read_gold_table,
)
from benchsmith.scoring.mmiu_parse import (
    legacy_choice,
    legacy_correct,
    legacy_judge_prompt,
    legacy_options_text,
    legacy_prediction,
)
from benchsmith.scoring.predictions import prediction_lines

SPLIT = "test"
CIRCULAR = "circular"
LEGACY_JUDGE = "gpt-4o-mini"
GOLD_COLUMNS = ["id", "task", "relationship", "question", "options", "answer"]
_FIX = 'write one JSON object per line: {"id": "3d_pose_estimation_00000", "response": "B"}'
JUDGE_PROMPT = (
    "A model answered a multiple-choice question. Say which option its answer chooses.\n"
    "Question: {question}\nOptions:\n{options}\nAnswer: {answer}\n"
    "Reply with the option letter only, or Z if the answer chooses none of them."
)


def relationship_names(dataset_dir: Path, config: str) -> list[str]:
    """The ``relationship`` ClassLabel names, from the card's ``dataset_info``."""
    return class_label_names(dataset_dir, config, "relationship")


def load_gold(dataset_dir: Path, config: str) -> list[dict[str, Any]]:
    columns = GOLD_COLUMNS + (["item_id"] if config == CIRCULAR else ["task_extras"])
    rows = read_gold_table(dataset_dir, config, SPLIT, columns).to_pylist()
    names = relationship_names(dataset_dir, config)
    for row in rows:
        row["relationship"] = names[row["relationship"]]
        row["options_text"] = release_options_text(row)
    return rows


def release_options_text(row: dict[str, Any]) -> str:
    """The options as the official judge prompt quotes them: the release's own ``options``
    string for an ingested row (its spacing, blank lines and final newline kept), else the
    ``A: ...`` lines the release format writes (a built row, or a rotation of ``circular``)."""
    try:
        extras = json.loads(row.get("task_extras") or "{}")
    except ValueError:
        extras = {}
    raw = extras.get("options_raw") if isinstance(extras, dict) else None
    return raw if isinstance(raw, str) else legacy_options_text(row["options"])


def read_predictions(path: Path, known: set[str], strict: bool) -> tuple[dict[str, dict], int]:
    out: dict[str, dict[str, Any]] = {}
    lines: dict[str, int] = {}
    unknown = 0
    for number, row in prediction_lines(path, _FIX):
        if not isinstance(row, dict):
            raise BenchsmithError(f"line {number}: not a JSON object", path=path, fix=_FIX)
        sample = row.get("id", row.get("sample_id"))
        if not isinstance(sample, str) or not sample:
            raise BenchsmithError(f"line {number}: id must be a non-empty string", path=path,
                                  fix=_FIX)  # fmt: skip
        response = row.get("response")
        if response is not None and not isinstance(response, str):
            raise BenchsmithError(f"line {number}: response must be a string or null",
                                  path=path, fix=_FIX)  # fmt: skip
        if sample not in known:
            if strict:
                raise BenchsmithError(f"line {number}: {sample!r} is not a sample of this "
                                      "config", path=path, fix="drop --strict-ids or fix the ids")  # fmt: skip
            unknown += 1
            continue
        if sample in lines:
            raise BenchsmithError(f"line {number}: second row for {sample!r}; the first is line "
                                  f"{lines[sample]}", path=path, fix="keep one row per id")  # fmt: skip
        lines[sample] = number
        out[sample] = {"response": response, "model": str(row.get("model") or "")}
    return out, unknown


def judge_client(model: str, base_url: str | None, cache: str | None, max_tokens: int):
    from benchsmith.core.llm import DEFAULT_CACHE_DIR, LLMClient, LLMConfig

    return LLMClient(LLMConfig(model=model, base_url=base_url, max_tokens=max_tokens,
                               cache_dir=Path(cache) if cache else DEFAULT_CACHE_DIR))  # fmt: skip


def _judge(client: Any, prompts: list[str]) -> list[Any]:
    from benchsmith.core.llm import user_message

    return client.complete_many([[user_message(p, ())] for p in prompts], desc="mmiu judge")


def verdicts_default(gold, predictions, client) -> dict[str, dict[str, Any]]:
    """Per sample: ``correct``, ``step`` (the extraction step that decided: exact, cue,
    leading, bracketed, option_text, refusal, none; or judge, missing). A refusal is never
    sent to the judge: it chose nothing."""
    out: dict[str, dict[str, Any]] = {}
    pending = []
    for row in gold:
        response = (predictions.get(row["id"]) or {}).get("response")
        if response is None:
            out[row["id"]] = {"correct": False, "step": "missing"}
            continue
        letter, step = extract_letter(response, row["options"])
        out[row["id"]] = {"correct": letter == row["answer"], "step": step}
        if letter is None and client is not None and step != "refusal":
            pending.append((row, response))
    if pending:
        prompts = [JUDGE_PROMPT.format(question=row["question"], answer=response,
                                       options=legacy_options_text(row["options"]))
                   for row, response in pending]  # fmt: skip
        for (row, _), result in zip(pending, _judge(client, prompts), strict=True):
            letter, _ = extract_letter(result.text if result.ok else "", row["options"])
            if letter is not None:
                out[row["id"]] = {"correct": letter == row["answer"], "step": "judge"}
            elif not result.ok:
                out[row["id"]]["judge_error"] = result.error
    return out


def verdicts_legacy(gold, predictions, client) -> dict[str, dict[str, Any]]:
    """Per sample, the official rules; ``dropped`` samples leave the denominator."""
    out: dict[str, dict[str, Any]] = {}
    pending = []
    for row in gold:
        prediction = predictions.get(row["id"])
        if prediction is None or prediction["response"] is None:
            out[row["id"]] = {"correct": False, "step": "missing"}
            continue
        choice = legacy_choice(prediction["response"], prediction["model"])
        if choice is None:
            pending.append((row, prediction["response"]))
            continue
        out[row["id"]] = {"correct": legacy_correct(choice, row["answer"]), "step": "letter",
                          "choice": choice}  # fmt: skip
    if pending and client is None:
        for row, _ in pending:
            out[row["id"]] = {"correct": False, "step": "needs_judge", "dropped": True}
    elif pending:
        prompts = [legacy_judge_prompt(row["question"], row["options_text"],
                                       legacy_prediction(response))
                   for row, response in pending]  # fmt: skip
        for (row, _), result in zip(pending, _judge(client, prompts), strict=True):
            if not result.ok:
                out[row["id"]] = {"correct": False, "step": "judge_error", "dropped": True}
                continue
            choice = result.text.strip()
            out[row["id"]] = {"correct": legacy_correct(choice, row["answer"]), "step": "judge",
                              "choice": choice}  # fmt: skip
    return out


def _task_block(verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    counted = [v for v in verdicts if not v.get("dropped")]
    accuracy, stderr = rate([v["correct"] for v in counted])
    steps: dict[str, int] = defaultdict(int)
    for v in verdicts:
        steps[v["step"]] += 1
    return {
        "accuracy": accuracy,
        "n": len(counted),
        "correct": sum(v["correct"] for v in counted),
        "stderr": stderr,
        "dropped": len(verdicts) - len(counted),
        "missing": steps.get("missing", 0),
        "unparsed": steps.get("none", 0),
        "refusals": steps.get("refusal", 0),
        "by_step": dict(sorted(steps.items())),
    }


def _circular_items(gold, verdicts) -> tuple[list[dict], dict[str, dict]]:
    """One pseudo-row per item: right when every rotation is right."""
    items: dict[str, dict[str, Any]] = {}
    for row in gold:
        item = items.setdefault(row["item_id"], {**row, "id": row["item_id"], "all": []})
        item["all"].append(verdicts[row["id"]])
    rows = list(items.values())
    merged = {}
    for item in rows:
        parts = item.pop("all")
        kept = [p for p in parts if not p.get("dropped")]
        merged[item["id"]] = {
            "correct": bool(kept) and all(p["correct"] for p in kept),
            "step": "missing" if any(p["step"] == "missing" for p in parts) else "circular",
            "dropped": not kept,
        }
    return rows, merged


def score_mmiu(dataset_dir: Path, config: str, predictions_path: Path, *, legacy: bool = False,
               judge_model: str | None = None, judge_base_url: str | None = None,
               judge_cache: str | None = None, strict: bool = False) -> dict[str, Any]:  # fmt: skip
    gold = load_gold(Path(dataset_dir), config)
    path = Path(predictions_path)
    predictions, unknown = read_predictions(path, {r["id"] for r in gold}, strict)
    model = judge_model or (LEGACY_JUDGE if legacy else None)
    client = None
    if model and (judge_model or judge_base_url):
        client = judge_client(model, judge_base_url, judge_cache, 512 if legacy else 16)
    verdicts = (verdicts_legacy if legacy else verdicts_default)(gold, predictions, client)
    rows = gold
    if config == CIRCULAR:
        rows, verdicts = _circular_items(gold, verdicts)
    per_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    relationship_of = {}
    for row in rows:
        per_task[row["task"]].append(verdicts[row["id"]])
        relationship_of[row["task"]] = row["relationship"]
    tasks = {task: _task_block(v) for task, v in sorted(per_task.items())}
    by_relationship: dict[str, list[float]] = defaultdict(list)
    for task, block in tasks.items():
        if block["accuracy"] is not None:
            by_relationship[relationship_of[task]].append(block["accuracy"])
    scored = [b["accuracy"] for b in tasks.values() if b["accuracy"] is not None]
    everything = _task_block([v for vs in per_task.values() for v in vs])
    return {
        "config": config,
        "mode": "legacy" if legacy else "default",
        "circular": config == CIRCULAR,
        "accuracy_unit": "fraction",
        "judge": {
            "model": client.model if client else None,
            "asked": sum(v["step"] in ("judge", "judge_error") for v in verdicts.values()),
        },  # fmt: skip
        "overall": {
            "accuracy": sum(scored) / len(scored) if scored else None,
            "tasks": len(scored),
            "pooled_accuracy": everything["accuracy"],
            "n": everything["n"],
        },
        "per_task": tasks,
        "per_relationship": {r: sum(v) / len(v) for r, v in sorted(by_relationship.items())},
        "missing": everything["missing"],
        "unparsed": everything["unparsed"],
        "unparsed_rate": everything["unparsed"] / len(rows) if rows else 0.0,
        "refusals": everything["refusals"],  # replies that decline: wrong, never judged
        "dropped": everything["dropped"],
        "needs_judge": sum(v["step"] == "needs_judge" for v in verdicts.values()),
        "unknown_ids": unknown,
    }


class MmiuScorer(Scorer):
    family = "mmiu"
    summary = "option-letter accuracy per task, relationship means, circular and legacy modes"
    headline = "overall.accuracy"
    description = __doc__.split("\n\n", 1)[1]
    options = (
        ScoreOption("--legacy", "reproduce the official evaluate.py + evaluate_correct.py"),
        ScoreOption(
            "--judge-model",
            "LLM that maps unparsed replies to a letter (legacy "
            "default: gpt-4o-mini when a --judge-base-url is given)",
            type=str,
            metavar="MODEL",
        ),  # fmt: skip
        ScoreOption(
            "--judge-base-url",
            "OpenAI-compatible server of the judge (else "
            "$OPENAI_BASE_URL; key from $OPENAI_API_KEY)",
            type=str,
            metavar="URL",
        ),  # fmt: skip
        ScoreOption(
            "--llm-cache",
            "the judge's reply cache (default .benchsmith/llm-cache)",
            type=str,
            metavar="DIR",
            keyword="judge_cache",
        ),  # fmt: skip
    )

    def score_file(self, dataset_dir: Path, config: str, predictions: Path, *,
                   legacy: bool = False, judge_model: str | None = None,
                   judge_base_url: str | None = None, judge_cache: str | None = None,
                   strict_ids: bool = False, **_: Any) -> dict[str, Any]:  # fmt: skip
        return score_mmiu(dataset_dir, config, predictions, legacy=legacy,
                          judge_model=judge_model, judge_base_url=judge_base_url,
                          judge_cache=judge_cache, strict=strict_ids)  # fmt: skip

    def sample_score(self, row: dict[str, Any], response: str) -> float:
        letter, _ = extract_letter(response, row["options"])
        return float(letter == row["answer"])

    def reference_predictions(
        self, dataset_dir: Path, config: str, response: str | None = None
    ) -> list[dict[str, Any]]:
        table = read_gold_table(dataset_dir, config, SPLIT, ["id", "answer"])
        return [{"id": r["id"], "response": r["answer"] if response is None else response}
                for r in table.to_pylist()]  # fmt: skip


MMIU_SCORER = MmiuScorer()
