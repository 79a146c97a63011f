"""Every fix hint names options and settings that exist.

A hint that tells the user to pass ``--unknown-policy`` or set ``curate.judges.unknown_policy``
when neither exists is worse than none. This reads every ``fix=...`` text in the package (the
string parts of literals and f-strings), and checks each ``--flag`` it names against the real
command-line parsers, and each dotted ``params.yaml`` key against the params schema.
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

from benchsmith.builders import FAMILIES
from benchsmith.cli import build_parser
from benchsmith.commands import VERBS
from benchsmith.commands.params_check import params_schema
from benchsmith.core.schema import Block, BlockOf, ListOf
from benchsmith.sources import SOURCES

PACKAGE = Path(__file__).resolve().parents[1] / "benchsmith"
FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
TOP_LEVEL = ("profile", "version", "seed", "images", "sources", *FAMILIES.names(), "curate")
EXTERNAL_FLAGS = {"--force-reinstall"}  # pip's, in a "pip install ..." hint
DOTTED = re.compile(rf"\b(?:{'|'.join(TOP_LEVEL)})(?:\.[a-z_]+)+")


def string_parts(node: ast.AST) -> list[str]:
    """The literal text of an expression: constants, f-string parts, concatenations."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [part.value for part in node.values if isinstance(part, ast.Constant)]
    if isinstance(node, ast.BinOp):
        return string_parts(node.left) + string_parts(node.right)
    if isinstance(node, ast.IfExp):
        return string_parts(node.body) + string_parts(node.orelse)
    return []


def fix_hints() -> list[tuple[str, str]]:
    hints = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                for keyword in node.keywords:
                    if keyword.arg == "fix":
                        text = "".join(string_parts(keyword.value))
                        hints.append((f"{path.relative_to(PACKAGE)}:{node.lineno}", text))
    return hints


def all_flags() -> set[str]:
    """Every option string of every command, family step and source verb."""
    flags: set[str] = set()

    def walk(parser: argparse.ArgumentParser, words: list[str], depth: int) -> None:
        for action in parser._actions:
            flags.update(s for s in action.option_strings if s.startswith("--"))
            if isinstance(action, argparse._SubParsersAction) and depth < 3:
                for name in action.choices:
                    sub = build_parser([*words, name])
                    walk(subparser_at(sub, [*words, name]), [*words, name], depth + 1)

    walk(build_parser([]), [], 0)
    return flags


def subparser_at(parser: argparse.ArgumentParser, words: list[str]) -> argparse.ArgumentParser:
    for word in words:
        action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = action.choices[word]
    return parser


def schema_has(node, keys: list[str]) -> bool:
    for key in keys:
        if isinstance(node, ListOf):
            node = node.item
        if isinstance(node, Block):
            if key not in node.fields:
                return False
            node = node.fields[key]
        elif isinstance(node, BlockOf):
            node = node.value
        else:
            return False
    return True


def test_the_hint_reader_finds_the_hints():
    hints = fix_hints()
    assert len(hints) > 100
    assert any("--missing-policy" in text for _, text in hints)
    assert any("curate.judges.unknown_ids" in DOTTED.findall(text) for _, text in hints)
    assert {name for name, _, _ in VERBS} >= {"curate", "score", "audit"}


def test_every_flag_a_hint_names_exists():
    flags = all_flags()
    assert {"--missing-policy", "--unknown-ids", "--no-counts", "--strict-ids"} <= flags
    wrong = [
        f"{where}: {flag}"
        for where, text in fix_hints()
        for flag in FLAG.findall(text)
        if flag not in flags | EXTERNAL_FLAGS
    ]
    assert not wrong, "hints naming options that do not exist:\n" + "\n".join(wrong)


def test_every_params_key_a_hint_names_exists():
    scope = tuple(TOP_LEVEL) + tuple(f"sources.{name}" for name in SOURCES.names())
    schema = params_schema(scope)
    wrong = [
        f"{where}: {key}"
        for where, text in fix_hints()
        for key in DOTTED.findall(text)
        if not schema_has(schema, key.split("."))
    ]
    assert not wrong, "hints naming params keys that do not exist:\n" + "\n".join(wrong)
