"""Cleaning: hints removed, parallel blanks split, option faults flagged; each a decision."""

from __future__ import annotations

import json

from benchsmith.builders.multi.cleaning import clean_questions, parallel_parts
from benchsmith.builders.multi.config import Cleaning
from benchsmith.builders.multi.questions import SourceProblem, questions_of


def rows_of(content: str, kind: str = "html", qtype: str = "填空", answer: str = "H2O\nO2"):
    record = {"problem_content": "", "problem_content_list": [content],
              "problem_type_list": [qtype], "problem_answer_list": [answer],
              "education": "初中", "subject": ["化学"], "img_paths": []}  # fmt: skip
    problem = SourceProblem("czhx_x", record, kind, "converted", "problems.json", "0" * 64,
                            (), (), "crawled")  # fmt: skip
    return questions_of(problem)


def test_parallel_blanks_become_one_question_each_with_their_answers():
    content = "写出下列物质的化学式（提示：注意下标的位置）：①水 [MASK]；②氧气 [MASK]。"
    out = clean_questions(rows_of(content), Cleaning())
    assert [r["question_id"] for r in out] == ["czhx_x_0.1", "czhx_x_0.2"]
    assert [r["answer"] for r in out] == ["H2O", "O2"]
    assert [r["points"] for r in out] == [1, 1]
    assert out[0]["question_content"] == "写出下列物质的化学式：\n①水 [MASK]"
    assert "提示" not in out[1]["text"]
    reasons = [[d["reason"] for d in r["decisions"]] for r in out]
    assert reasons == [["HINT_REMOVED", "PARALLEL_BLANKS"]] * 2
    evidence = json.loads(out[0]["decisions"][0]["evidence"])
    assert evidence["removed"] == ["（提示：注意下标的位置）"]


def test_blanks_of_one_sentence_are_not_split():
    assert parallel_parts("(1) 加速度为 [MASK] m/s²，速度为 [MASK] m/s。") == []
    out = clean_questions(rows_of("“一年之计在于[MASK]”，“[MASK]高气爽”。", answer="春\n秋"),
                          Cleaning())  # fmt: skip
    assert [r["question_id"] for r in out] == ["czhx_x_0"]


def test_type_hints_in_choice_questions_are_removed():
    content = "下列说法正确的是 <多选>**（注意：*多选***）（ ）[MASK]\nA. 甲\nB. 乙\nC. 丙"
    (row,) = clean_questions(rows_of(content, qtype="多选", answer="AB"), Cleaning())
    assert row["question_content"] == "下列说法正确的是 （ ）[MASK]\nA. 甲\nB. 乙\nC. 丙"
    assert [o["text"] for o in row["options"]] == ["甲", "乙", "丙"]


def test_release_questions_keep_their_text_unless_asked():
    content = "写出化学式（提示：下标）：①水 [MASK]；②氧气 [MASK]。"
    (kept,) = clean_questions(rows_of(content, kind="release"), Cleaning())
    assert kept["question_content"] == content and kept["decisions"] == []
    rewritten = clean_questions(rows_of(content, kind="release"), Cleaning(apply_to="all"))
    assert len(rewritten) == 2
    assert len(clean_questions(rows_of(content), Cleaning(apply_to="none"))) == 1


def test_option_faults_are_flagged_not_fixed():
    content = "选出正确的（ ）[MASK]\nA. 甲\nB. \nC. 甲\nD. 丁"
    (row,) = clean_questions(rows_of(content, qtype="单选", answer="E"), Cleaning())
    assert row["flags"] == ["EMPTY_OPTION", "DUPLICATE_OPTIONS", "ANSWER_NOT_AN_OPTION"]
    assert row["question_content"] == content
    (none,) = clean_questions(rows_of("没有选项（ ）[MASK]", qtype="单选", answer="A"), Cleaning())
    assert none["flags"] == ["OPTIONS_NOT_FOUND"]


def test_a_question_without_an_answer_is_flagged():
    """A release problem without `problem_answer_list` (or with an empty entry) is kept but
    flagged, never published as if it had a gold; an `Other` question has no gold to miss."""
    record = {"problem_content": "", "problem_content_list": ["甲是（ ）[MASK]\nA. 1\nB. 2",
                                                           "说说你的看法。"],
              "problem_type_list": ["单选", "其他"], "education": "初中", "subject": ["化学"],
              "img_paths": []}  # fmt: skip
    problem = SourceProblem("czhx_0", record, "release", "release", "problem.json", "0" * 64,
                            (), (), "v1")  # fmt: skip
    choice, other = clean_questions(questions_of(problem), Cleaning())
    assert choice["answer"] is None and choice["flags"] == ["ANSWER_MISSING"]
    assert json.loads(choice["decisions"][-1]["evidence"]) == {"type": "SA"}
    assert other["flags"] == []
    (blank,) = clean_questions(rows_of("水是（ ）[MASK]", qtype="填空", answer=" "), Cleaning())
    assert "ANSWER_MISSING" in blank["flags"]
