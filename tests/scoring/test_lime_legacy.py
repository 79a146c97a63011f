"""LIME's legacy per-sample scores, case by case (worked out from the lmms-eval task rules).

The same functions were also compared with the LIME fork's own task code, run outside the
project on 6,912 generated (reply, gold) pairs: 0 differences.
"""

from __future__ import annotations

import pytest

from benchsmith.scoring import lime_legacy as L
from benchsmith.scoring.metrics import anls, exact_accuracy


@pytest.mark.parametrize(
    ("reply", "score"),
    [("B", 1), ("[B]", 1), ("B,", 1), ("(B)", 1), (" B. a dog", 1), ("b", 1), ("B:", 1),
     ("B) a dog", 0), ("The answer is B", 0), ("B dog", 0), ("C", 0)],
)  # fmt: skip
def test_ai2d_filter_then_exact_match_without_punctuation(reply, score):
    assert L.ai2d_score(reply, "B", {}) == score


def test_default_ai2d_accepts_bracketed_and_comma_letters():
    """The default mode's regression: "[B]" and "B," are right answers, as in LIME."""
    assert exact_accuracy("[B]", "B") == 1.0
    assert exact_accuracy("B,", "B") == 1.0
    assert exact_accuracy("B, C", "B") == 0.0  # two letters is no single answer


def test_scienceqa_and_pope_are_literal():
    assert L.scienceqa_score("B. dog", "B", {}) == 1
    assert L.scienceqa_score("(B)", "B", {}) == 0
    assert L.pope_score(" Yes ", "yes", {}) == 1
    assert L.pope_score("Yes.", "yes", {}) == 0


def test_infovqa_list_gold_turns_any_passing_anls_into_one():
    assert L.infovqa_score("apple inc.", ["apple inc", "apple"], {}) == 1.0
    assert anls("apple inc.", ["apple inc", "apple"]) == pytest.approx(0.9)  # default: no
    assert L.infovqa_score("apple inc.", "apple inc", {}) == pytest.approx(0.9)  # one string
    assert L.infovqa_score("pear", ["apple"], {}) == 0.0
    # the length is the unnormalised one: extra spaces shrink the distance's weight
    assert L.infovqa_score("  Apple   Inc ", "apple inc", {}) == 1.0


def test_vqa_single_answer_scores_zero_and_two_of_ten_is_exactly_the_cutoff():
    assert L.vqa_score("dog", ["dog"], {}) == 0.0  # no other annotator to agree with
    assert L.vqa_score("Two.", ["2"] * 2 + ["3"] * 8, {}) == 0.6
    assert L.evalai_normalize("Don't, isn't it?") == "don't isn't it"
    assert L.evalai_normalize("dont") == "don't"
    assert L.evalai_normalize("lets go") == "lets go"  # EvalAI has no key for "lets"


def test_chartqa_python_float_and_ocrbench_hme():
    assert L.chartqa_score("12.5", "12", {}) == 1.0
    assert L.chartqa_score("1,234", "1234", {}) == 0.0  # float() refuses the comma
    assert L.chartqa_score("0", "0", {}) == 1.0  # gold 0: string comparison
    assert L.ocrbench_score("The word is HELLO", "hello", {}) == 1.0
    assert L.ocrbench_score("x ^ 2", "x^2", {"dataset": "HME100k"}) == 1.0
    assert L.ocrbench_score("X^2", "X^2", {"dataset": "HME100k"}) == 0.0  # reply lower-cased


def test_subtask_names():
    assert L.legacy_subtask("ai2d_suit") == "ai2d"
    assert L.legacy_subtask("OK-VQA") == "ok_vqa"
    assert L.legacy_subtask("charts") is None
