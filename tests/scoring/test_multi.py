"""MULTI's scorer on a published sample: points, breakdowns, legacy mode, formats, baseline."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchsmith.cli import main
from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.multi import MULTI_SCORER, load_gold, random_reply, score_multi


def write(path: Path, replies: dict[str, str]) -> Path:
    path.write_text("".join(json.dumps({"question_id": q, "response": r}, ensure_ascii=False)
                            + "\n" for q, r in replies.items()), encoding="utf-8")  # fmt: skip
    return path


@pytest.fixture(scope="module")
def gold(multi_build) -> dict[str, dict]:
    return {r["question_id"]: r for r in load_gold(multi_build["published"], "questions")}


def test_gold_answers_score_full_points(multi_build, tmp_path, gold):
    rows = MULTI_SCORER.reference_predictions(multi_build["published"], "questions")
    path = tmp_path / "gold.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    report = score_multi(multi_build["published"], "questions", path)
    possible = sum(r["points"] for r in gold.values())
    assert report["overall"]["possible"] == possible  # the sum of what was asked
    assert report["overall"]["score"] == pytest.approx(1.0, abs=1e-6)
    assert set(report["per_level"]) == {"JuH", "SeH", "Uni", "Driving", "AAT"}
    assert set(report["per_image_class"]) == {"NI", "SI", "MI"}
    assert report["not_scored"] == 1 and report["ma_accuracy"] == 1.0


def test_the_papers_examples(multi_build, tmp_path):
    replies = {"gzsw_0_0": "AC", "czsx_0_0": "The answer is B", "shxc_0_0": "<think>A?</think>C",
               "gzwl_0_0": "1\n二", "shjk_0_0": "缺少图片信息，无法作答"}  # fmt: skip
    report = score_multi(
        multi_build["published"], "questions", write(tmp_path / "p.jsonl", replies)
    )
    points = report["per_question"]
    assert points["gzsw_0_0"] == [2.0, 3.0]  # ACE answered AC
    assert points["czsx_0_0"] == [1.0, 1.0] and points["shxc_0_0"] == [1.0, 1.0]
    assert points["gzwl_0_0"] == [2.0, 2.0]
    assert points["shjk_0_0"] == [0.0, 1.0] and report["rejected"] == 1
    assert report["ma_accuracy"] == 0.0
    wrong = score_multi(multi_build["published"], "questions",
                        write(tmp_path / "w.jsonl", {"gzsw_0_0": "BC"}))  # fmt: skip
    assert wrong["per_question"]["gzsw_0_0"] == [0.0, 3.0]
    legacy = score_multi(multi_build["published"], "questions", write(tmp_path / "l.jsonl",
                         {"czsx_0_0": "The answer is B"}), legacy=True)  # fmt: skip
    assert legacy["per_question"]["czsx_0_0"] == [0.0, 1.0]  # "T" is the first letter
    end = score_multi(multi_build["published"], "questions", write(tmp_path / "e.jsonl",
                      {"czsx_0_0": "The answer is B"}), legacy=True, answer_position="end")  # fmt: skip
    assert end["per_question"]["czsx_0_0"] == [1.0, 1.0]


def test_official_prediction_json_and_bad_files(multi_build, tmp_path):
    official = tmp_path / "preds.json"
    official.write_text(json.dumps({"czsx_0_0": {"question_id": "czsx_0_0",
                                                 "question_image_number": 0,
                                                 "prediction": "B"}}))  # fmt: skip
    report = score_multi(multi_build["published"], "questions", official)
    assert report["per_question"]["czsx_0_0"] == [1.0, 1.0]
    assert report["missing"] == report["overall"]["questions"] - 1
    # both denominators, side by side: every question asked, and only the answered one
    overall = report["overall"]
    assert overall["possible_answered"] == 1.0 and overall["score_answered"] == 1.0
    assert overall["possible"] > overall["possible_answered"]
    assert overall["score"] == pytest.approx(1.0 / overall["possible"], abs=1e-6)
    assert "no prediction" in overall["denominator"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question_id": "czsx_0_0", "response": 3}\n')
    with pytest.raises(BenchsmithError, match="response must be a string"):
        score_multi(multi_build["published"], "questions", bad)


def test_score_command_and_its_options(multi_build, tmp_path, capsys):
    path = write(tmp_path / "p.jsonl", {"czsx_0_0": "B", "unknown_9_9": "A"})
    assert main(["score", str(multi_build["published"]), "--config", "elite",
                 "--predictions", str(path), "--legacy", "--answer-position", "end"]) == 0  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert report["mode"] == "legacy" and report["unknown_ids"] == 1
    assert main(["score", str(multi_build["published"]), "--config", "extend",
                 "--predictions", str(path)]) == 2  # fmt: skip


def test_seeded_random_baseline(gold):
    first = [random_reply(r, np.random.default_rng(0)) for r in gold.values()]
    assert first == [random_reply(r, np.random.default_rng(0)) for r in gold.values()]
    sa = gold["czsx_0_0"]
    picks = {random_reply(sa, np.random.default_rng(k)) for k in range(50)}
    assert picks == {"A", "B", "C", "D"}
    fb = random_reply(gold["gzwl_0_0"], np.random.default_rng(1))
    assert len(fb.split("\n")) == 2
