"""Write ``docs/reference/cli.md``: every command's ``--help``, generated from the parsers.

The page is the parsers' own text (usage, arguments, defaults), one section per command and
subcommand, so it cannot drift from the code: ``tests/test_docs.py`` regenerates it and fails
when the committed page differs. Run ``python scripts/make_cli_reference.py`` after changing a
flag or a help text.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "docs" / "reference" / "cli.md"
WIDTH = "100"  # argparse wraps to the terminal's width: fixed, so the page is the same anywhere


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def sections(parser: argparse.ArgumentParser, words: list[str]) -> list[str]:
    """This parser's help, then each subcommand's, depth first."""
    level = "#" * min(len(words) + 1, 4)
    title = "benchsmith " + " ".join(words) if words else "benchsmith"
    help_text = parser.format_help().rstrip()
    out = [f"{level} `{title}`\n\n```text\n{help_text}\n```\n"]
    for name, child in _subcommands(parser).items():
        out += sections(child, [*words, name])
    return out


def reference() -> str:
    os.environ["COLUMNS"] = WIDTH
    from benchsmith.cli import build_parser

    parser = build_parser(["--help"])
    parser.prog = "benchsmith"
    head = ("# CLI reference\n\nEvery command's `--help`, generated from the parsers by "
            "`scripts/make_cli_reference.py` (a test fails when this page and the parsers "
            "differ). [CLI](../cli.md) gives the overview.\n\n")  # fmt: skip
    return head + "\n".join(sections(parser, []))


def main() -> int:
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(reference(), encoding="utf-8")
    print(f"wrote {OUT}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
