"""Table tests for the lenient MMNeedle answer parser and the strict normaliser."""

from __future__ import annotations

import pytest

from benchsmith.scoring.mmneedle_parse import (
    parse_answer,
    strict_absent_forms,
    strict_normalize,
)

OK_CASES = [
    ("1, 2, 3.", 1, [(1, 2, 3)]),
    ("1,2,3", 1, [(1, 2, 3)]),
    ("(1, 2, 3)", 1, [(1, 2, 3)]),
    ("[1, 2, 3]", 1, [(1, 2, 3)]),
    ("1 2 3", 1, [(1, 2, 3)]),
    ("Answer: 1, 2, 3", 1, [(1, 2, 3)]),
    ("answer - 1, 2, 3", 1, [(1, 2, 3)]),
    ("Answer -1", 1, [None]),
    ('"1, 2, 3"', 1, [(1, 2, 3)]),
    ("**1, 2, 3**", 1, [(1, 2, 3)]),
    ("`1, 2, 3`", 1, [(1, 2, 3)]),
    ("```\n1, 2, 3\n```", 1, [(1, 2, 3)]),
    ("  \n10, 2, 1\n", 1, [(10, 2, 1)]),
    ("Answer: -1", 1, [None]),
    ("-1", 1, [None]),
    ("-1.", 1, [None]),
    ("-1, -1, -1", 1, [None]),
    ("-1; -1", 2, [None, None]),
    ("-1", 2, [None, None]),
    ("-1, -1", 2, [None, None]),
    ("-1-1", 2, [None, None]),
    ("-1, -1, -1; -1, -1, -1", 2, [None, None]),
    ("1, 2, 3; 4, 1, 2", 2, [(1, 2, 3), (4, 1, 2)]),
    ("(1,2,3); (4,1,2).", 2, [(1, 2, 3), (4, 1, 2)]),
    ("1, 2, 3\n4, 1, 2", 2, [(1, 2, 3), (4, 1, 2)]),
    ("1, 2, 3; -1", 2, [(1, 2, 3), None]),
    ("Answer: 1, 2, 3; -1;", 2, [(1, 2, 3), None]),
]

UNPARSED_CASES = [
    ("the second image", 1),
    ("1, 2", 1),
    ("1, 2, 3, 4", 1),
    ("1, 2, 3; 4, 5", 2),
    ("1, 2, 3", 2),
    ("1, 2, 3; 4, 5, 6; 7, 8, 9", 2),
    ("-1; -1; -1", 2),
    ("-1, 2, 3", 1),
    ("Image 1, row 2, column 3", 1),
    ("1.5, 2, 3", 1),
]


@pytest.mark.parametrize(("text", "k", "expected"), OK_CASES)
def test_parse_ok(text: str, k: int, expected: list) -> None:
    parsed = parse_answer(text, k)
    assert parsed.status == "ok"
    assert parsed.locations == expected


@pytest.mark.parametrize(("text", "k"), UNPARSED_CASES)
def test_parse_unparsed(text: str, k: int) -> None:
    parsed = parse_answer(text, k)
    assert parsed.status == "unparsed"
    assert parsed.locations == []


@pytest.mark.parametrize("text", [None, "", "   ", "\n\t"])
def test_parse_missing(text: str | None) -> None:
    assert parse_answer(text, 1).status == "missing"
    assert parse_answer(text, 2).status == "missing"


def test_all_absent_property() -> None:
    assert parse_answer("-1", 2).all_absent
    assert not parse_answer("1, 2, 3; -1", 2).all_absent
    assert not parse_answer("nope", 1).all_absent


def test_num_needles_must_be_positive() -> None:
    with pytest.raises(ValueError):
        parse_answer("-1", 0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1, 2, 3.", "1, 2, 3"),
        ("\n1, 2,\n 3\n", "1, 2, 3"),
        (" .-1. ", "-1"),
        ("1,2,3", "1,2,3"),
        ("Answer: 1, 2, 3", "Answer: 1, 2, 3"),
    ],
)
def test_strict_normalize(text: str, expected: str) -> None:
    assert strict_normalize(text) == expected


def test_strict_absent_forms() -> None:
    assert strict_absent_forms(1) == {"-1"}
    assert strict_absent_forms(2) == {"-1", "-1; -1", "-1, -1", "-1, -1, -1; -1, -1, -1", "-1-1"}
