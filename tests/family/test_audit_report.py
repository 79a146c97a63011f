"""The audit report's shared checks: re-derived rows that are not published are named (the
first five per config) and the rest counted; build facts are taken from the published row."""

from __future__ import annotations

from benchsmith.family.audit_report import NAMED_MISSING, AuditReport


def test_unpublished_rows_are_named_then_counted():
    report = AuditReport("all configs")
    report.unpublished("clevr", [f"q{i:02d}" for i in range(12)], ["q00", "q01"], "id")
    named = [f for f in report.failures if "re-derived row is not published" in f]
    assert len(named) == NAMED_MISSING and "clevr/q02 [id]" in named[0]
    assert any("5 more re-derived rows are not published" in f for f in report.failures)
    clean = AuditReport("all configs")
    clean.unpublished("clevr", ["a", "b"], ["b", "a"], "id")
    assert clean.ok


def test_a_derived_row_takes_its_build_facts_from_the_published_row():
    published = {"answer": "3", "provenance": {"code_revision": "x", "builder_version": "1",
                                               "params_hash": "p"}}  # fmt: skip
    derived = {"answer": "3", "provenance": {"code_revision": "y", "builder_version": "2",
                                             "params_hash": "p"}}  # fmt: skip
    report = AuditReport("one row")
    assert report.compare_derived_row("clevr", "q1", published, derived) and report.ok
    wrong = {**derived, "provenance": {**derived["provenance"], "params_hash": "other"}}
    assert not report.compare_derived_row("clevr", "q1", published, wrong)
    assert any("provenance" in f for f in report.failures)
