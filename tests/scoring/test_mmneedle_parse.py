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
    # a location written out with its labels is one clear answer
    ("Image 1, row 2, column 3", 1, [(1, 2, 3)]),
    ("Image 10, row 1, column 1.", 1, [(10, 1, 1)]),
    ("It is in image 4 row 2 col 3; image 1, row 1, column 2", 2, [(4, 2, 3), (1, 1, 2)]),
    ("Assistant: (2, 1, 3; 4, 1, 1)", 2, [(2, 1, 3), (4, 1, 1)]),
    ("<think>Image 3 first?</think>\n**2, 1, 3**", 1, [(2, 1, 3)]),
    ("２, １, ３", 1, [(2, 1, 3)]),
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
    # prose with exactly one well-formed answer
    ("The answer is 10, 1, 1.", 1, [(10, 1, 1)]),
    ("10, 1, 1\nBecause the dog is in the top-left cell.", 1, [(10, 1, 1)]),
    ("It is (3, 1, 2), I think.", 1, [(3, 1, 2)]),
    ("No subimage matches the caption, so -1.", 2, [None, None]),
    ("I see it in 3, 2, 1. Final answer: 3, 2, 1", 1, [(3, 2, 1)]),
    ("The needles are at 1, 2, 3; 4, 1, 2 in that order.", 2, [(1, 2, 3), (4, 1, 2)]),
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
    ("Image 1, row 2", 1),  # a location written out needs all three labels
    ("1.5, 2, 3", 1),
    # prose that does not name exactly one answer: never guessed
    ("Either 1, 2, 3 or 2, 2, 3.", 1),
    ("Maybe 1, 2, 3, not -1.", 1),
    ("It is at 1, 2, 3, 4 somewhere", 1),
    ("The first is 1, 1, 1; the second is 2, 2, 2", 2),
    ("Perhaps -2, 1, 1.", 1),
    ("Image 10, row 1, column 1, or image 3, row 2, column 2.", 1),  # two locations for one
    ("Image 10, row 1, column 1 (about 2 cells from the edge)", 1),  # another number besides
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
