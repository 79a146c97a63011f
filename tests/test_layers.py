"""The command line is one layer: ``argparse`` is imported by ``benchsmith/cli.py`` and
``benchsmith/commands/`` alone, so no family, stage, source or core module takes an
``argparse.Namespace``: they get settings and inputs objects (``core.settings``,
``core.command_inputs``)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "benchsmith"


def in_command_layer(path: Path) -> bool:
    relative = path.relative_to(PACKAGE)
    return relative == Path("cli.py") or relative.parts[0] == "commands"


def names_a_namespace(tree: ast.AST) -> bool:
    """Code (an annotation included, not a docstring) that names ``Namespace``."""
    return any(
        (isinstance(node, ast.Name) and node.id == "Namespace")
        or (isinstance(node, ast.Attribute) and node.attr == "Namespace")
        for node in ast.walk(tree)
    )


def imports_argparse(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name == "argparse" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "argparse":
            return True
    return False


def test_only_the_command_layer_imports_argparse_or_names_a_namespace():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if in_command_layer(path):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if imports_argparse(tree) or names_a_namespace(tree):
            offenders.append(str(path.relative_to(PACKAGE)))
    assert offenders == []


def test_the_check_sees_an_import_where_there_is_one():
    assert imports_argparse(ast.parse("import argparse"))
    assert imports_argparse(ast.parse("def f():\n    from argparse import Namespace\n"))
    assert not imports_argparse(ast.parse("import argparse_extra"))
    assert names_a_namespace(ast.parse("def run(args: 'x', y: argparse.Namespace): ..."))
    assert not names_a_namespace(ast.parse('"""never an argparse.Namespace"""'))
    assert in_command_layer(PACKAGE / "commands" / "build.py")
    assert not in_command_layer(PACKAGE / "builders" / "mmneedle" / "cli.py")
