"""The params schema language: unknown keys with their closest name, types, bounds, nulls."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.schema import (
    Block,
    BlockOf,
    ListOf,
    Value,
    block_of_dataclass,
    check_document,
    check_node,
)

SCHEMA = Block(
    {
        "grids": ListOf(Value("int", minimum=1), non_empty=True),
        "order": Value("str", choices=("canonical", "legacy")),
        "quality": Value("int", minimum=1, maximum=100),
        "gap": Value("float", nullable=True),
        "flag": Value("bool"),
        "sizes": BlockOf(Block({"pool": Value("int")}), keys=("sample", "full")),
    }
)


def problems(document):
    found: list[str] = []
    check_node(SCHEMA, document, "", found)
    return found


def test_a_valid_document_has_no_problem():
    assert problems({"grids": [1, 2], "order": "legacy", "gap": None, "gap2": 1}) == [
        "gap2: unknown key (did you mean 'gap'?); valid: grids, order, quality, gap, flag, sizes"
    ]
    assert problems({"grids": [1], "quality": 100, "gap": 2, "flag": False}) == []


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"grid": [2]}, "grid: unknown key (did you mean 'grids'?)"),
        ({"grids": "2 4"}, "grids: expected a list of integers >= 1, got '2 4' (str)"),
        ({"grids": [2, "x"]}, "grids[1]: expected an integer >= 1, got 'x' (str)"),
        ({"grids": [0]}, "grids[0]: expected an integer >= 1, got 0"),
        ({"grids": []}, "grids: expected a list of integers >= 1, got an empty list"),
        ({"order": "canonicl"}, "order: expected one of canonical, legacy, got 'canonicl' (did"),
        ({"quality": 101}, "quality: expected an integer from 1 to 100, got 101"),
        ({"quality": True}, "quality: expected an integer from 1 to 100, got True (bool)"),
        ({"quality": None}, "quality: expected an integer from 1 to 100, got null"),
        ({"flag": "yes"}, "flag: expected true or false, got 'yes' (str)"),
        ({"sizes": {"smaple": {}}}, "sizes.smaple: unknown key (did you mean 'sample'?)"),
        ({"sizes": {"full": {"pol": 1}}}, "sizes.full.pol: unknown key (did you mean 'pool'?)"),
        ({"sizes": [1]}, "sizes: expected a mapping, got [1] (list)"),
    ],
)
def test_each_problem_names_the_key_the_expected_type_and_the_value(document, expected):
    found = problems(document)
    assert len(found) == 1 and found[0].startswith(expected), found


def test_a_float_accepts_an_integer_and_a_block_accepts_null():
    assert problems({"gap": 1, "sizes": None}) == []


def test_check_document_lists_every_problem_and_names_the_file(tmp_path):
    with pytest.raises(BenchsmithError) as caught:
        check_document(SCHEMA, {"grid": 1, "quality": "75"}, tmp_path / "params.yaml")
    message = str(caught.value)
    assert "2 problem(s)" in message and "grid:" in message and "quality:" in message
    assert str(tmp_path / "params.yaml") in message


@dataclasses.dataclass(frozen=True)
class Knobs:
    files: tuple[Path, ...] = ()
    cutoff: float | None = None
    name: str = "x"
    enabled: bool = True


def test_a_settings_dataclass_is_its_own_schema():
    block = block_of_dataclass(Knobs, name=Value("str", choices=("x", "y")))
    found: list[str] = []
    check_node(block, {"files": "one.jsonl", "cutoff": None, "enabled": 1, "name": "z"}, "k", found)
    assert found == [
        "k.enabled: expected true or false, got 1 (int)",
        "k.name: expected one of x, y, got 'z'",
    ]
    found.clear()
    check_node(block, {"files": [1], "cutoff": "high"}, "k", found)
    assert found == [
        "k.files[0]: expected a path (string), got 1 (int)",
        "k.cutoff: expected a number or null, got 'high' (str)",
    ]
