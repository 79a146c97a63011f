"""Scoring VL-ICL predictions against a minimal published layout written by the tests."""

from __future__ import annotations

import json
import math
import secrets
import statistics
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchsmith.cli import main
from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.vlicl import score_vlicl

# Operator answers include negatives (A - B with B > A) and a zero.
OPERATOR_ANSWERS = ["7", "-5", "12", "0", "-1", "81"]
CLEVR_ANSWERS = ["3", "2", "5", "0"]
OPEN_ANSWERS = ["dax", "blicket", "slation", "perpo"]
MATCHING_ANSWERS = ["Yes", "No", "No", "Yes", "No", "Yes"]


def _write_shard(folder: Path, split: str, table: pa.Table) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, folder / f"{split}-00000-{secrets.token_hex(8)}.parquet")


def _publish(root: Path, config: str, answers: list[str], task: str | None = None) -> Path:
    """``root/data/<config>/query-*.parquet`` with id, task, answer; a support shard too."""
    task = task or config
    ids = [f"{task}/query/{k:05d}" for k in range(len(answers))]
    folder = root / "data" / config
    # two query shards, so the scorer must read all of them
    half = len(ids) // 2
    for chunk in (slice(0, half), slice(half, None)):
        table = pa.table(
            {"id": ids[chunk], "task": [task] * len(ids[chunk]), "answer": answers[chunk]}
        )
        _write_shard(folder, "query", table)
    support = pa.table({"id": [f"{task}/support/00000"], "task": [task], "answer": [answers[0]]})
    _write_shard(folder, "support", support)
    (root / "build_info.json").write_text(json.dumps({"family": "vlicl"}), encoding="utf-8")
    return root


def _ids(config: str, answers: list[str]) -> list[str]:
    return [f"{config}/query/{k:05d}" for k in range(len(answers))]


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _rows(config, answers, responses, n_shot=0, seed=0):
    return [
        {"query_id": qid, "n_shot": n_shot, "seed": seed, "response": response}
        for qid, response in zip(_ids(config, answers), responses, strict=True)
    ]


@pytest.mark.parametrize(
    ("config", "answers"),
    [
        ("operator_induction", OPERATOR_ANSWERS),
        ("operator_induction_interleaved", OPERATOR_ANSWERS),
        ("clevr", CLEVR_ANSWERS),
        ("open_mi", OPEN_ANSWERS),
        ("matching_mi", MATCHING_ANSWERS),
    ],
)
def test_gold_answers_score_perfectly_for_every_shot_and_seed(tmp_path, config, answers):
    dataset = _publish(tmp_path / "pub", config, answers)
    rows = [
        row
        for shot in (0, 1, 8)
        for seed in (0, 1, 2)
        for row in _rows(config, answers, answers, shot, seed)
    ]
    report = score_vlicl(dataset, config, _jsonl(tmp_path / "p.jsonl", rows))
    assert report["n_queries"] == len(answers)
    assert report["overall"]["accuracy"] == 1.0
    assert report["overall"]["n"] == 9 * len(answers)
    assert set(report["per_shot"]) == {"0", "1", "8"}
    for block in report["per_shot"].values():
        assert set(block["per_seed"]) == {"0", "1", "2"}
        assert block["accuracy"] == block["mean_over_seeds"] == 1.0
    assert report["missing"] == report["unknown_ids"] == 0


def test_missing_rows_and_null_responses_stay_in_the_denominator(tmp_path):
    dataset = _publish(tmp_path / "pub", "clevr", CLEVR_ANSWERS)
    rows = _rows("clevr", CLEVR_ANSWERS, CLEVR_ANSWERS)
    rows[1]["response"] = None
    del rows[2]  # absent
    report = score_vlicl(dataset, "clevr", _jsonl(tmp_path / "p.jsonl", rows))
    assert report["overall"]["n"] == 4
    assert report["overall"]["correct"] == 2
    assert report["overall"]["accuracy"] == 0.5
    assert report["missing"] == report["per_shot"]["0"]["missing"] == 2


def test_per_seed_mean_std_and_stderr(tmp_path):
    dataset = _publish(tmp_path / "pub", "open_mi", OPEN_ANSWERS)
    wrong = ["blicket", "dax", "perpo", "slation"]
    seed1 = OPEN_ANSWERS[:2] + wrong[2:]  # half right
    rows = _rows("open_mi", OPEN_ANSWERS, OPEN_ANSWERS, 2, 0) + _rows(
        "open_mi", OPEN_ANSWERS, seed1, 2, 1
    )
    block = score_vlicl(dataset, "open_mi", _jsonl(tmp_path / "p.jsonl", rows))["per_shot"]["2"]
    assert block["per_seed"]["0"]["accuracy"] == 1.0
    assert block["per_seed"]["1"]["accuracy"] == 0.5
    assert block["mean_over_seeds"] == pytest.approx(0.75)
    assert block["accuracy"] == pytest.approx(6 / 8)
    assert block["std_over_seeds"] == pytest.approx(statistics.stdev([1.0, 0.5]))
    assert block["stderr"] == pytest.approx(math.sqrt(0.75 * 0.25 / 8))


def test_legacy_mode_cannot_credit_negative_operator_answers(tmp_path):
    dataset = _publish(tmp_path / "pub", "operator_induction", OPERATOR_ANSWERS)
    responses = [f"The answer is {a}." for a in OPERATOR_ANSWERS]
    path = _jsonl(tmp_path / "p.jsonl", _rows("operator_induction", OPERATOR_ANSWERS, responses))
    fixed = score_vlicl(dataset, "operator_induction", path)
    legacy = score_vlicl(dataset, "operator_induction", path, mode="legacy")
    non_negative = sum(not a.startswith("-") for a in OPERATOR_ANSWERS)
    assert fixed["overall"]["accuracy"] == 1.0
    assert legacy["overall"]["correct"] == non_negative
    assert legacy["mode"] == "legacy" and fixed["mode"] == "fixed"


def test_empty_matching_answers_score_the_no_items_only_in_legacy(tmp_path):
    dataset = _publish(tmp_path / "pub", "matching_mi", MATCHING_ANSWERS)
    path = _jsonl(tmp_path / "p.jsonl", _rows("matching_mi", MATCHING_ANSWERS, [""] * 6))
    legacy = score_vlicl(dataset, "matching_mi", path, mode="legacy")
    fixed = score_vlicl(dataset, "matching_mi", path)
    assert legacy["overall"]["correct"] == MATCHING_ANSWERS.count("No")
    assert fixed["overall"]["correct"] == 0
    assert fixed["unparsed"] == 6 and fixed["missing"] == 0


def test_unknown_ids_are_counted_or_rejected_and_duplicates_rejected(tmp_path):
    dataset = _publish(tmp_path / "pub", "clevr", CLEVR_ANSWERS)
    rows = _rows("clevr", CLEVR_ANSWERS, CLEVR_ANSWERS)
    rows.append({"query_id": "clevr/support/00000", "n_shot": 0, "response": "3"})  # not a query
    rows.append({"query_id": "open_mi/query/00000", "n_shot": 0, "response": "dax"})
    path = _jsonl(tmp_path / "p.jsonl", rows)
    report = score_vlicl(dataset, "clevr", path)
    assert report["unknown_ids"] == 2
    assert report["overall"]["accuracy"] == 1.0
    with pytest.raises(BenchsmithError, match="line 5: 'clevr/support/00000' is not a query"):
        score_vlicl(dataset, "clevr", path, strict=True)
    rows.insert(1, {**rows[0], "response": "9"})  # a second, wrong row for the first query
    with pytest.raises(BenchsmithError, match="line 2: second row .* the first is line 1"):
        score_vlicl(dataset, "clevr", _jsonl(tmp_path / "d.jsonl", rows))


def test_shots_filter_and_alias_keys(tmp_path):
    dataset = _publish(tmp_path / "pub", "clevr", CLEVR_ANSWERS)
    rows = [
        {"id": qid, "n_shot": shot, "response": response, "model": "m"}  # seed defaults to 0
        for shot, responses in ((0, ["1", "1", "1", "1"]), (4, CLEVR_ANSWERS))
        for qid, response in zip(_ids("clevr", CLEVR_ANSWERS), responses, strict=True)
    ]
    path = _jsonl(tmp_path / "p.jsonl", rows)
    only4 = score_vlicl(dataset, "clevr", path, shots=4)
    assert list(only4["per_shot"]) == ["4"] and only4["overall"]["accuracy"] == 1.0
    assert list(only4["per_shot"]["4"]["per_seed"]) == ["0"]
    both = score_vlicl(dataset, "clevr", path)
    assert both["overall"]["accuracy"] == 0.5 and both["per_shot"]["0"]["accuracy"] == 0.0
    with pytest.raises(BenchsmithError, match="n_shot 2"):
        score_vlicl(dataset, "clevr", path, shots=2)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"query_id": "clevr/query/00000", "n_shot": "2", "response": "3"}', "n_shot"),
        ('{"query_id": "clevr/query/00000", "n_shot": 2}', "response"),
        ('{"n_shot": 2, "response": "3"}', "query_id"),
        ('{"query_id": "clevr/query/00000", "n_shot": 2, "response": 3}', "string or null"),
        ('["clevr/query/00000", 2, "3"]', "JSON object"),
    ],
)
def test_malformed_line_names_file_and_line(tmp_path, line, message):
    dataset = _publish(tmp_path / "pub", "clevr", CLEVR_ANSWERS)
    good = json.dumps({"query_id": "clevr/query/00001", "n_shot": 0, "response": "2"})
    path = tmp_path / "bad.jsonl"
    path.write_text(f"{good}\n\n{line}\n", encoding="utf-8")
    with pytest.raises(BenchsmithError) as info:
        score_vlicl(dataset, "clevr", path)
    assert "line 3" in str(info.value) and message in str(info.value)
    assert str(path) in str(info.value)


def test_dataset_problems_are_clear_errors(tmp_path):
    dataset = _publish(tmp_path / "pub", "clevr", CLEVR_ANSWERS)
    preds = _jsonl(tmp_path / "p.jsonl", _rows("clevr", CLEVR_ANSWERS, CLEVR_ANSWERS))
    with pytest.raises(BenchsmithError, match="clevr") as info:
        score_vlicl(dataset, "open_mi", preds)
    assert "--config" in str(info.value)
    bad = _publish(tmp_path / "bad", "clevr", ["3", "three"])
    with pytest.raises(BenchsmithError, match="not a non-negative integer"):
        score_vlicl(bad, "clevr", preds)
    no_answer = tmp_path / "noanswer"
    _write_shard(no_answer / "data" / "clevr", "query", pa.table({"id": ["a"], "task": ["clevr"]}))
    (no_answer / "build_info.json").write_text('{"family": "vlicl"}', encoding="utf-8")
    with pytest.raises(BenchsmithError, match="answer"):
        score_vlicl(no_answer, "clevr", preds)


def test_predictions_for_another_config_only_are_an_error(tmp_path):
    dataset = _publish(tmp_path / "pub", "clevr", CLEVR_ANSWERS)
    preds = _jsonl(tmp_path / "p.jsonl", _rows("open_mi", OPEN_ANSWERS, OPEN_ANSWERS))
    with pytest.raises(BenchsmithError, match="4 rows with unknown ids"):
        score_vlicl(dataset, "clevr", preds)


def test_cli_prints_the_report_and_switches_normalisation(tmp_path, capsys):
    dataset = _publish(tmp_path / "pub", "clevr", CLEVR_ANSWERS)
    responses = ["3 objects", "two", "5", "0."]
    preds = _jsonl(tmp_path / "p.jsonl", _rows("clevr", CLEVR_ANSWERS, responses, 1, 0))
    base = ["score", str(dataset), "--config", "clevr"]
    assert main([*base, "--predictions", str(preds), "--shots", "1"]) == 0
    fixed = json.loads(capsys.readouterr().out)
    assert fixed["overall"]["accuracy"] == 1.0 and fixed["shots"] == 1
    assert main([*base, "--predictions", str(preds), "--legacy"]) == 0
    legacy = json.loads(capsys.readouterr().out)
    assert legacy["mode"] == "legacy" and legacy["overall"]["correct"] == 2  # "5" and "0."
    assert main([*base, "--predictions", str(preds), "--legacy-normalisation"]) == 0
    old = capsys.readouterr()
    assert json.loads(old.out) == legacy and "use --legacy" in old.err
    (tmp_path / "broken.jsonl").write_text("{oops\n", encoding="utf-8")
    assert main([*base, "--predictions", str(tmp_path / "broken.jsonl")]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "line 1" in captured.err and "broken.jsonl" in captured.err
    assert main([*base, "--predictions", str(preds), "--subset", "paper"]) == 2
    assert "--subset applies to mmneedle datasets" in capsys.readouterr().err
