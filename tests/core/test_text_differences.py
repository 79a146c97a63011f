"""Where a published text differs from its re-rendering: a field path for front matter and
JSON (list entries by their name), line numbers for prose, every place (up to ten) named."""

from __future__ import annotations

import json

from benchsmith.core.text_differences import (
    NAMED_PER_FILE,
    WHOLE,
    data_differences,
    differences,
    json_values,
)

CARD = "---\nversion: 1.0.0\nconfigs:\n- config_name: a\n  default: true\n---\n\n# Title\n\n{}\n"


def test_front_matter_fields_and_body_lines_are_both_named():
    found = CARD.replace("1.0.0", "9.9.9").format("All answers were checked by hand.")
    expected = CARD.format("Answers come from the annotations.")
    named = differences("README.md", found, expected)
    assert named[0] == ("version", "'9.9.9'", "'1.0.0'")
    line = found.split("\n").index("All answers were checked by hand.") + 1
    assert named[1] == (f"line {line}", "'All answers were checked by hand.'",
                        "'Answers come from the annotations.'")  # fmt: skip
    assert len(named) == 2


def test_list_entries_are_named_by_their_id_and_a_missing_entry_is_said():
    expected = {"distribution": [{"@id": "data/a.parquet", "sha256": "1" * 64},
                                 {"@id": "data/b.parquet", "sha256": "2" * 64}]}  # fmt: skip
    found = {"distribution": [{"@id": "data/a.parquet", "sha256": "0" * 64}]}
    named = differences("croissant.json", json.dumps(found), json.dumps(expected))
    assert [where for where, _, _ in named] == [
        "distribution.data/a.parquet.sha256",
        "distribution.data/b.parquet",
    ]
    assert named[1][1] == "nothing (no such field)"


def test_a_reordering_or_a_layout_change_is_named_by_line():
    expected = json.dumps({"a": 1, "b": 2}, indent=2)
    found = json.dumps({"b": 2, "a": 1}, indent=2)
    assert differences("x.json", found, expected)[0][0] == "line 2"
    assert differences("x.json", expected + "\n", expected)  # only a final newline differs


def test_an_unparsable_file_and_an_added_line_are_named():
    assert differences("x.json", "{oops", "{}")[0][0] == "(whole file)"
    named = differences("LICENSE.md", "terms\nAlso free for commercial use.\n", "terms\n")
    assert named == [("line 2", "'Also free for commercial use.'", "nothing (a line was added)")]


def test_a_rewritten_file_is_named_by_its_first_differences_only():
    found = "\n".join(f"line {i}" for i in range(50))
    expected = "\n".join(f"other {i}" for i in range(50))
    assert len(differences("LICENSE.md", found, expected)) <= NAMED_PER_FILE
    many = {str(i): i for i in range(50)}
    assert len(data_differences(many, {})) == NAMED_PER_FILE


def test_values_compare_as_json_reads_them():
    assert json_values({"t": (1, 2), 3: "x"}) == {"t": [1, 2], "3": "x"}
    assert data_differences(json_values({"t": (1, 2)}), {"t": [1, 2]}) == []
    assert data_differences("abc", "abd") == [(WHOLE, "'abc'", "'abd'")]
    assert data_differences({"n": 1}, {"n": 1.0}) == [("n", "1", "1.0")]


def test_a_long_line_is_shown_from_where_it_changes():
    before = "- **Rendering:** " + "cells of 256 px, " * 8 + "JPEG quality 75"
    after = before.replace("JPEG quality 75", "JPEG quality (lossless) 75")
    ((where, said, rendered),) = differences("README.md", after + "\n", before + "\n")
    assert where == "line 1"
    assert "(lossless)" in said and said.startswith("…")
    assert "JPEG quality 75" in rendered
