"""Judges and ``benchsmith score`` agree: a benchsmith dataset's replies are scored by its family.

Also LIME's legacy verdicts through the rule, and a foreign dataset falling back to the metric.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsmith.cli import main
from benchsmith.core.errors import BenchsmithError
from benchsmith.curate.kind import rows_family
from benchsmith.hf.dataset_view import ColumnMap, DatasetView
from benchsmith.scoring.metrics import get_metric
from benchsmith.stages.scoring_rule import build_scoring_rule

NUMBER_WORDS = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
]


def _clevr(sample_project: Path) -> DatasetView:
    return DatasetView(sample_project / "published" / "vlicl", "clevr", "query")


def test_vlicl_judges_are_scored_like_score_vlicl(sample_project, tmp_path, capsys):
    view = _clevr(sample_project)
    rule = build_scoring_rule("auto", get_metric("accuracy"), rows_family(view.dataset_dir))
    assert rule.name == "vlicl scorer"
    samples = list(view.iter_samples(with_images=False))
    replies = {}
    for i, sample in enumerate(samples):
        count = int(sample.answer)
        replies[sample.sample_id] = (
            f"{count} objects" if i % 3 == 0 else NUMBER_WORDS[count] if i % 3 == 1 else "-1"
        )
    verdicts = {s.sample_id: rule.is_correct(s, replies[s.sample_id]) for s in samples}
    assert sum(verdicts.values()) == len([i for i in range(len(samples)) if i % 3 != 2])
    # exact match (the old judge scoring) calls "2 objects" and "three" wrong
    exact = build_scoring_rule("auto", get_metric("accuracy"), None)
    assert not any(exact.is_correct(s, replies[s.sample_id]) for s in samples)

    predictions = tmp_path / "preds.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"query_id": sid, "n_shot": 0, "seed": 0, "response": reply}) + "\n"
            for sid, reply in replies.items()
        )
    )
    argv = ["score", str(view.dataset_dir), "--config", "clevr", "--predictions", str(predictions)]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["overall"]["correct"] == sum(verdicts.values())


def test_curated_mmneedle_judges_use_the_mmneedle_scorer(sample_project):
    curated = sample_project / "published" / "curated" / "mmneedle_m1_n2_k1"
    view = DatasetView(curated, "m1_n2_k1", "test", ColumnMap(id="sample_id"))
    rule = build_scoring_rule("auto", get_metric("accuracy"), rows_family(curated))
    assert rule.name == "mmneedle scorer"
    sample = next(iter(view.iter_samples(with_images=False)))
    gold = sample.row["gold_answer"]
    assert rule.is_correct(sample, f"The answer is {gold}.")
    assert not rule.is_correct(sample, "7, 7, 7")


def test_lime_legacy_rule_scores_by_subtask_and_names_unknown_subtasks():
    class Sample:
        def __init__(self, subtask, answer, choices=None, row=None):
            self.sample_id, self.subtask, self.answer = "s1", subtask, answer
            self.choices, self.row = choices, row or {}

    rule = build_scoring_rule("lime-legacy", get_metric("accuracy"), None)
    ai2d = Sample("ai2d_suit", "B", choices=["cat", "dog", "cow"])
    assert rule.is_correct(ai2d, "[B]")
    assert not rule.is_correct(ai2d, "The answer is B")  # lmms-eval's filter misses it
    infovqa = Sample("infovqa", ["apple inc", "apple"])
    assert rule.is_correct(infovqa, "apple inc.")  # ANLS 0.9 -> 1.0 by the any() rule
    assert not build_scoring_rule("auto", get_metric("anls"), None).is_correct(
        infovqa, "apple inc."
    )
    textvqa = Sample("TextVQA", ["stop"] * 2 + ["go"] * 8)
    assert rule.is_correct(textvqa, "stop")  # 2 of 10 annotators: exactly 0.6
    with pytest.raises(BenchsmithError, match="not a LIME subtask"):
        rule.is_correct(Sample("charts", "x"), "x")
