"""Reading and scoring judge prediction JSONL files, including every malformed-input path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.metrics import get_metric, prescored_metric
from benchsmith.stages.judges import read_judge_files, score_judges


def write_lines(path: Path, lines: list[str | dict]) -> Path:
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def test_reads_response_and_score_rows_and_normalises_ids(tmp_path):
    path = write_lines(
        tmp_path / "judges.jsonl",
        [
            {"sample_id": 7, "model": "m1", "response": "B"},
            "",
            "   ",
            {"sample_id": "7", "model": "m2", "score": 0.25, "metric": "vqa"},
            {"sample_id": "x-1", "model": "m1", "prediction": "yes"},
            {"sample_id": "x-2", "model": "m1", "response": None},
        ],
    )
    table = read_judge_files([path])
    assert len(table) == 4
    assert table.models == ["m1", "m2"]
    assert table.rows[("7", "m1")].response == "B"
    assert table.rows[("7", "m2")].score == 0.25
    assert table.rows[("x-1", "m1")].response == "yes"
    assert table.rows[("x-2", "m1")].response == ""
    assert table.rows[("x-1", "m1")].line == 5


@pytest.mark.parametrize(
    ("bad_line", "message"),
    [
        ('{"sample_id": 1, "model": "m1", "response": "B"', "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"model": "m1", "response": "B"}', "missing key"),
        ('{"sample_id": 1, "response": "B"}', "missing key"),
        ('{"sample_id": 1, "model": "m1"}', "needs a 'response'"),
        ('{"sample_id": 1.5, "model": "m1", "score": 1}', "sample_id"),
        ('{"sample_id": true, "model": "m1", "score": 1}', "sample_id"),
        ('{"sample_id": 1, "model": "", "score": 1}', "model"),
        ('{"sample_id": 1, "model": "m1", "score": 1.5}', "outside"),
        ('{"sample_id": 1, "model": "m1", "score": -0.1}', "outside"),
        ('{"sample_id": 1, "model": "m1", "score": "0.5"}', "must be a number"),
        ('{"sample_id": 1, "model": "m1", "score": true}', "must be a number"),
        ('{"sample_id": 1, "model": "m1", "response": 3}', "string or null"),
    ],
)
def test_malformed_lines_name_file_line_and_fix(tmp_path, bad_line, message):
    good = {"sample_id": 0, "model": "m1", "response": "A"}
    path = write_lines(tmp_path / "judges.jsonl", [good, "", bad_line])
    with pytest.raises(BenchsmithError) as info:
        read_judge_files([path])
    text = str(info.value)
    assert "line 3" in text and message in text
    assert str(path) in text and "fix:" in text


def test_identical_duplicates_are_counted_conflicts_are_errors(tmp_path):
    row = {"sample_id": 1, "model": "m1", "response": "B"}
    first = write_lines(tmp_path / "a.jsonl", [row])
    same = write_lines(tmp_path / "b.jsonl", [{**row, "sample_id": "1"}])
    table = read_judge_files([first, same])
    assert len(table) == 1 and table.identical_duplicates == 1

    conflict = write_lines(
        tmp_path / "c.jsonl",
        [{"sample_id": 0, "model": "m1", "score": 0}, {**row, "response": "C"}],
    )
    with pytest.raises(BenchsmithError) as info:
        read_judge_files([first, conflict])
    assert "line 2" in str(info.value) and f"{first}:1" in str(info.value)


def test_unreadable_or_empty_input_is_a_clear_error(tmp_path):
    with pytest.raises(BenchsmithError, match="judge predictions file not found") as info:
        read_judge_files([tmp_path / "absent.jsonl"])
    assert str(tmp_path / "absent.jsonl") in str(info.value)
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b'{"sample_id": 1, "model": "m", "score": 1}\n\xff\xfe\n')
    with pytest.raises(BenchsmithError, match="line 2 is not UTF-8") as info:
        read_judge_files([binary])
    assert f"{binary}:2" in str(info.value)
    with pytest.raises(BenchsmithError, match="no judge prediction files"):
        read_judge_files([])


def vqa_table(tmp_path):
    answers = {"q1": ["cat"] * 2 + ["dog"] * 8, "q2": ["2"] * 10}
    rows = [
        {"sample_id": "q1", "model": "m1", "response": "Cat."},  # 2 annotators: exactly 0.6
        {"sample_id": "q1", "model": "m2", "response": "dog"},
        {"sample_id": "q2", "model": "m1", "response": "two"},
        {"sample_id": "q2", "model": "m2", "score": 0.59},
    ]
    return read_judge_files([write_lines(tmp_path / "j.jsonl", rows)]), answers


def test_score_judges_uses_metric_and_cutoff(tmp_path):
    table, answers = vqa_table(tmp_path)
    scores = score_judges(table, answers, get_metric("vqa_accuracy"), {"q1", "q2"})
    assert scores.cutoff == 0.6 and scores.metric == "vqa_accuracy"
    assert scores.score("q1", "m1") == pytest.approx(0.6)
    assert scores.correct == {
        ("q1", "m1"): True,
        ("q1", "m2"): True,
        ("q2", "m1"): True,
        ("q2", "m2"): False,
    }
    assert scores.counters["scored_by_metric"] == 3 and scores.counters["prescored"] == 1

    strict = score_judges(table, answers, get_metric("vqa_accuracy"), {"q1", "q2"}, cutoff=0.7)
    assert strict.correct[("q1", "m1")] is False


def test_unknown_sample_ids_error_or_are_counted(tmp_path):
    rows = [{"sample_id": i, "model": "m1", "score": 1} for i in (1, 2, 99, 98)]
    path = write_lines(tmp_path / "j.jsonl", rows)
    table = read_judge_files([path])
    with pytest.raises(BenchsmithError) as info:
        score_judges(table, {}, get_metric("accuracy"), {"1", "2"})
    text = str(info.value)
    assert "2 judge row(s)" in text and "'98', '99'" in text and "line 3" in text
    assert str(path) in text

    scores = score_judges(table, {}, get_metric("accuracy"), {"1", "2"}, unknown_policy="ignore")
    assert scores.counters["unknown_sample_rows"] == 2
    assert scores.unknown_sample_ids == ["98", "99"]
    assert set(scores.scores) == {("1", "m1"), ("2", "m1")}


def test_response_rows_need_gold_and_a_computable_metric(tmp_path):
    path = write_lines(tmp_path / "j.jsonl", [{"sample_id": 1, "model": "m1", "response": "a"}])
    table = read_judge_files([path])
    with pytest.raises(BenchsmithError, match="no gold answer"):
        score_judges(table, {}, get_metric("accuracy"), {"1"})
    with pytest.raises(BenchsmithError, match="pre-computed 'score'"):
        score_judges(table, {"1": "a"}, prescored_metric("bleu4"), {"1"})
    with pytest.raises(BenchsmithError, match="cannot score"):
        score_judges(table, {"1": []}, get_metric("accuracy"), {"1"})


def test_plain_callable_metric_defaults_to_strict_cutoff(tmp_path):
    path = write_lines(
        tmp_path / "j.jsonl",
        [
            {"sample_id": 1, "model": "m1", "response": "abc"},
            {"sample_id": 2, "model": "m1", "response": "a"},
        ],
    )
    table = read_judge_files(path)

    def share_of_length(prediction, gold):
        return min(1.0, len(prediction) / len(gold))

    scores = score_judges(table, {"1": "abc", "2": "ab"}, share_of_length, {"1", "2"})
    assert scores.cutoff == 1.0 and scores.correct == {("1", "m1"): True, ("2", "m1"): False}
    lenient = score_judges(table, {"1": "abc", "2": "ab"}, share_of_length, {"1", "2"}, cutoff=0.5)
    assert lenient.correct[("2", "m1")] is True

    with pytest.raises(BenchsmithError, match="returned"):
        score_judges(table, {"1": "abc", "2": "ab"}, lambda p, g: 2.0, {"1", "2"})
