"""MULTI points under our policy and under the official rules, on the paper's own examples."""

from __future__ import annotations

import pytest

from benchsmith.scoring.multi_legacy import legacy_cleanup, legacy_score
from benchsmith.scoring.multi_points import clean_reply, score_question

FIVE = ["有细胞膜", "没有细胞核", "能进行新陈代谢", "一定是植物细胞", "含有遗传物质"]
FOUR = ["1", "2", "3", "4"]


@pytest.mark.parametrize(
    ("reply", "points", "exact"),
    [("ACE", 3, True), ("A, C", 2, False), ("A、C", 2, False), ("BC", 0, False),
     ("ABCE", 0, False), ("答案是 A 和 C。", 2, False), ("\\boxed{\\text{ACE}}", 3, True),
     ("<think>maybe B?</think>A C E", 3, True), ("I choose A and E because they hold.", 2, False)],
)  # fmt: skip
def test_multiple_answers_score_per_letter_and_zero_on_a_wrong_one(reply, points, exact):
    result = score_question(reply, "ACE", "MA", FIVE)
    assert (result.points, result.possible, result.exact) == (points, 3, exact)


@pytest.mark.parametrize(
    ("reply", "right"),
    [("B", True), ("The answer is B", True), ("答案是 B", True), ("(B) 2", True),
     ("\\boxed{B}", True), ("2", True), ("A", False), ("我不确定", False)],
)  # fmt: skip
def test_single_answers_are_read_where_models_put_them(reply, right):
    assert score_question(reply, "B", "SA", FOUR).points == float(right)


def test_blanks_alternatives_and_rejections():
    assert score_question("1\n二", "1\n2或二", "FB").points == 2
    assert score_question("1；2", "1\n2或二", "FB").points == 2
    assert score_question("$1$; two", "1\n2或二", "FB").points == 1
    # the release writes czyw_0's two blanks as one line "春；秋": two blanks, two points
    both = score_question("春；秋", "春；秋", "FB")
    assert (both.points, both.possible) == (2, 2)
    assert score_question("春\n夏", "春；秋", "FB").points == 1
    rejected = score_question("缺少图片信息，无法作答。B", "B", "SA", FOUR)
    assert rejected.rejected and rejected.points == 0 and rejected.possible == 1
    assert score_question("The image is missing, but A", "A", "SA", FOUR).rejected
    assert score_question("略", "略", "Other") .possible == 0  # fmt: skip
    op = score_question(
        "合力为 1 N，由牛顿第二定律 F = ma 得",
        "合力为 1 N，由牛顿第二定律 F = ma 得 F = 1 N。",
        "OP",
    )
    assert 0.5 < op.points < 1 and op.possible == 1


def test_cleanup():
    assert clean_reply("<think>\nA?\n</think>\n\n答案为：C") == "C"
    assert clean_reply("Reasoning... Answer: BD") == "BD"
    assert legacy_cleanup("分析\n\n答案为：\\boxed{\\text{BD}}") == "BD"


@pytest.mark.parametrize(
    ("reply", "label", "kind", "position", "expected"),
    [("B", "B", "单选", "start", (1, 1)), ("The answer is B", "B", "单选", "start", (0, 1)),
     ("The answer is B", "B", "单选", "end", (1, 1)), ("ACE", "ACE", "多选", "start", (3, 3)),
     ("A, C", "ACE", "多选", "start", (2, 3)), ("A、C", "ACE", "多选", "start", (1, 3)),
     ("ABCE", "ACE", "多选", "start", (0, 3)), ("1\n二", "1\n2或二", "填空", "start", (2, 2)),
     ("1；2", "1\n2或二", "填空", "start", (2, 2)), ("$\\frac12$", "\\frac{1}{2}", "填空", "start", (0, 1)),
     ("缺少图片信息", "B", "单选", "start", (0, 1)), ("x", "", "解答", "start", (0, 0)),
     ("画图", "略", "其他", "start", (0, 0))],
)  # fmt: skip
def test_the_official_rules_on_the_spec_goldens(reply, label, kind, position, expected):
    score, total, _ = legacy_score(reply, label, kind, position)
    assert (score, total) == expected
