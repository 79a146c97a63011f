"""MMIU's audit by id re-plans everything but renders only the rows it reads (the mutation
tests in tests/publish/test_audit_mutations.py show it still names every changed column,
forged ids included)."""

from __future__ import annotations

from benchsmith.builders.mmiu.audit import RowsOnDemand


def test_expected_rows_are_made_once_and_only_when_read():
    made: list[str] = []

    def maker(key: str):
        return lambda: made.append(key) or {"id": key}

    rows = RowsOnDemand({key: maker(key) for key in ("a", "b", "c")})
    assert list(rows) == ["a", "b", "c"] and len(rows) == 3 and "b" in rows
    assert made == []  # ids and their order are known without making any row
    assert rows["b"] == {"id": "b"} and rows["b"] is rows["b"]
    assert made == ["b"]
