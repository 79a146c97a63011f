"""Operator induction rows: correct answers (negatives too), images, balance, overlap report."""

from __future__ import annotations

import hashlib
import operator
from pathlib import Path

import pytest

from benchsmith.builders.vlicl.operator_images import (
    load_operator_font,
    render_expression,
    render_operand,
)
from benchsmith.builders.vlicl.operators import build_operator_task

APPLY = {"+": operator.add, "-": operator.sub, "x": operator.mul}


@pytest.fixture(scope="module")
def font():
    return load_operator_font()


def _build(task, out: Path, font, n_support=80, per_op=20, seed=0):
    return build_operator_task(
        task,
        n_support=n_support,
        n_query_per_operator=per_op,
        seed=seed,
        font=font[0],
        font_source=font[1].source,
        rendered_dir=out,
    )


def test_answers_are_the_true_results_including_negatives(tmp_path, font):
    result = _build("operator_induction", tmp_path, font)
    for row in result.support + result.query:
        a, b = row["extras"]["a"], row["extras"]["b"]
        assert 0 <= a <= 9 and 0 <= b <= 9
        by_op = row["extras"]["answers_by_op"]
        assert by_op == {"plus": a + b, "minus": a - b, "times": a * b}
    for row in result.query:
        op = row["extras"]["operator"]
        assert row["answer"] == str(APPLY[op](row["extras"]["a"], row["extras"]["b"]))
    for row in result.support:
        assert row["extras"]["operator"] is None
        assert row["answer"] == str(row["extras"]["a"] + row["extras"]["b"])
    negatives = [row for row in result.query if row["answer"].startswith("-")]
    assert negatives and all(row["extras"]["operator"] == "-" for row in negatives)
    assert result.stats["negative_query_answers"] == len(negatives)


def test_queries_are_balanced_and_interleaved(tmp_path, font):
    result = _build("operator_induction", tmp_path, font)
    ops = [row["extras"]["operator"] for row in result.query]
    assert len(ops) == 60 and ops[:6] == ["+", "-", "x", "+", "-", "x"]
    assert {op: ops.count(op) for op in "+-x"} == {"+": 20, "-": 20, "x": 20}
    support_pairs = [(r["extras"]["a"], r["extras"]["b"]) for r in result.support]
    assert len(set(support_pairs)) == 80  # distinct while there are enough pairs
    for op in "+-x":
        pairs = [
            (r["extras"]["a"], r["extras"]["b"])
            for r in result.query
            if r["extras"]["operator"] == op
        ]
        assert len(set(pairs)) == 20


def test_query_expressions_avoid_support_and_overlap_is_counted(tmp_path, font):
    full = _build("operator_induction", tmp_path / "a", font)
    support = {(r["extras"]["a"], r["extras"]["b"]) for r in full.support}
    assert not [r for r in full.query if (r["extras"]["a"], r["extras"]["b"]) in support]
    assert full.stats["queries_whose_expression_is_in_support"] == 0
    crowded = _build("operator_induction", tmp_path / "b", font, n_support=95)
    support = {(r["extras"]["a"], r["extras"]["b"]) for r in crowded.support}
    overlap = [r for r in crowded.query if (r["extras"]["a"], r["extras"]["b"]) in support]
    assert len(overlap) == 3 * (20 - 5)  # only 5 unused pairs are left for each operator
    assert crowded.stats["queries_whose_expression_is_in_support"] == len(overlap)


def test_rendered_images_show_the_row_expression(tmp_path, font):
    single = _build("operator_induction", tmp_path, font)
    for row in single.support[:5] + single.query[:5]:
        (ref,) = row["images"]
        assert ref["root"] == "rendered" and ref["file"].startswith("operator_induction/")
        data = (tmp_path / ref["file"]).read_bytes()
        assert data == render_expression(row["extras"]["a"], row["extras"]["b"], font[0])
        assert ref["sha256"] == hashlib.sha256(data).hexdigest()
    inter = _build("operator_induction_interleaved", tmp_path, font)
    for row in inter.query[:6]:
        assert len(row["images"]) == 2
        for ref, value in zip(row["images"], (row["extras"]["a"], row["extras"]["b"]), strict=True):
            assert (tmp_path / ref["file"]).read_bytes() == render_operand(value, font[0])


def test_deterministic_per_seed_and_task(tmp_path, font):
    first = _build("operator_induction", tmp_path / "a", font)
    again = _build("operator_induction", tmp_path / "b", font)
    assert (first.support, first.query) == (again.support, again.query)
    files_a = {p.name: p.read_bytes() for p in (tmp_path / "a" / "operator_induction").iterdir()}
    files_b = {p.name: p.read_bytes() for p in (tmp_path / "b" / "operator_induction").iterdir()}
    assert files_a == files_b
    other = _build("operator_induction", tmp_path / "c", font, seed=1)
    assert other.query != first.query
