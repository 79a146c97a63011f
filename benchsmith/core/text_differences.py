"""Where a published text differs from its re-rendering, said as a reader looks for it.

The audit compares the card, the licence and ``croissant.json`` byte for byte; when they
differ, a failure should point at the change: a field of the card's front matter or of the JSON
(``dataset_info.m1_n2_k1.splits.test.num_examples``, list entries named by their ``@id``,
``config_name`` or ``name``), or else the lines that differ.
"""

from __future__ import annotations

import difflib
import json
import os
from typing import Any

import yaml

ABSENT = object()
WHOLE = "(whole document)"  # the path of a difference at the top level
ENTRY_KEYS = ("@id", "config_name", "name")  # what names an entry of a list, in that order
SHOWN_CHARACTERS = 80
CONTEXT_CHARACTERS = 20  # shown before the first differing character of a long line
NAMED_PER_FILE = 10  # a file rewritten whole is named by its first ten differences


def differences(name: str, found: str, expected: str) -> list[tuple[str, str, str]]:
    """``(where, what the file says there, what the re-rendering says)`` for each place two
    texts differ, at most :data:`NAMED_PER_FILE`; ``where`` is a field path or ``line N``."""
    if name.endswith(".json"):
        try:
            named = _paths(json.loads(found), json.loads(expected))
        except ValueError as exc:
            return [("(whole file)", f"text that does not parse as JSON ({exc})", "JSON")]
        return (named or _lines(found, expected))[:NAMED_PER_FILE]
    if not (found.startswith("---\n") and expected.startswith("---\n")):
        return _lines(found, expected)[:NAMED_PER_FILE]
    (front, body), (front_expected, body_expected) = _split(found), _split(expected)
    named: list[tuple[str, str, str]] = []
    if front != front_expected:
        try:
            named = _paths(yaml.safe_load(front), yaml.safe_load(front_expected))
        except yaml.YAMLError:
            named = []
        named = named or _lines(front, front_expected, first=2)
    if body != body_expected:
        named += _lines(body, body_expected, first=front.count("\n") + 2)
    return named[:NAMED_PER_FILE]


def json_values(value: Any) -> Any:
    """``value`` as it reads back from a JSON file (tuples as lists, keys as strings)."""
    return json.loads(json.dumps(value, ensure_ascii=False))


def data_differences(found: Any, expected: Any) -> list[tuple[str, str, str]]:
    """``(field path, found, expected)`` for each field where two JSON-like values differ."""
    return _paths(found, expected)[:NAMED_PER_FILE]


def _split(text: str) -> tuple[str, str]:
    """Front matter (without its fences) and body (from the closing fence on)."""
    end = text.find("\n---\n", 4)
    return (text[4 : end + 1], text[end + 1 :]) if end >= 0 else (text, "")


def _lines(found: str, expected: str, first: int = 1) -> list[tuple[str, str, str]]:
    """Each run of changed lines, named by its first line number (counted from ``first``)."""
    a, b = found.splitlines(), expected.splitlines()
    named = []
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            x, y = (a[i1] if i1 < i2 else None), (b[j1] if j1 < j2 else None)
            start = _where_lines_part(x, y)
            said = (
                _shown_from(x, start) if x is not None else "nothing (a line the re-rendering has)"
            )
            rendered = _shown_from(y, start) if y is not None else "nothing (a line was added)"
            named.append((f"line {first + i1}", said, rendered))
    if not named:  # the same lines: other line endings or final newline
        named.append((f"line {first + len(a) - 1}", "other line endings", "the publisher's"))
    return named


def _where_lines_part(x: str | None, y: str | None) -> int:
    """Where two versions of a line part, less some context: long lines are shown from
    there, so the change is in view."""
    if x is None or y is None:
        return 0
    common = len(os.path.commonprefix([x, y]))
    return 0 if common < SHOWN_CHARACTERS // 2 else common - CONTEXT_CHARACTERS


def _shown_from(line: str, start: int) -> str:
    return _shown(line) if start <= 0 else "…" + _shown(line[start:])


def _paths(a: Any, b: Any, path: tuple[str, ...] = ()) -> list[tuple[str, str, str]]:
    """Every field where two parsed documents differ (none: equal as data, the difference is
    in layout or order)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [d for key in [*a, *(k for k in b if k not in a)]
                for d in _paths(a.get(key, ABSENT), b.get(key, ABSENT), (*path, str(key)))]  # fmt: skip
    if isinstance(a, list) and isinstance(b, list):
        named_a, named_b = _named_entries(a), _named_entries(b)
        if named_a is not None and named_b is not None:
            return _paths(named_a, named_b, path)
        return [d for index in range(max(len(a), len(b)))
                for d in _paths(a[index] if index < len(a) else ABSENT,
                                b[index] if index < len(b) else ABSENT, (*path, str(index)))]  # fmt: skip
    if a == b and type(a) is type(b):
        return []
    return [(".".join(path) or WHOLE, _shown(a), _shown(b))]


def _named_entries(entries: list[Any]) -> dict[str, Any] | None:
    """A list of dicts each named by the same key, as a dict by name (None: not such a list)."""
    for key in ENTRY_KEYS:
        names = [e.get(key) if isinstance(e, dict) else None for e in entries]
        if entries and all(isinstance(n, str) for n in names) and len(set(names)) == len(names):
            return dict(zip(names, entries, strict=True))
    return None


def _shown(value: Any) -> str:
    if value is ABSENT:
        return "nothing (no such field)"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = repr(text) if isinstance(value, str) else text
    return text if len(text) <= SHOWN_CHARACTERS else text[: SHOWN_CHARACTERS - 1] + "…"
