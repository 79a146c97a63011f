"""The ``benchsmith`` command: generic verbs built from the registries.

``source`` (SOURCES), ``build`` and ``publish`` (FAMILIES), ``audit`` and ``score`` (any
published folder: its family, SCORERS), ``curate`` (STAGES), ``predict``. Errors a user can fix
(:class:`BenchsmithError`) print as a short message naming the file and the fix, with exit code
2; everything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from benchsmith import __version__
from benchsmith.core.errors import BenchsmithError


def _positionals(argv: Sequence[str]) -> list[str]:
    return [a for a in argv if not a.startswith("-")]


def build_parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The parser for ``argv``: only the invoked verb (and family or source) is built in full,
    so a command imports only the code it runs (the other verbs are listed by name)."""
    from benchsmith.commands import VERBS

    parser = argparse.ArgumentParser(
        prog="benchsmith",
        description=(
            "Rebuild multimodal LLM benchmarks from their raw sources as versioned Hugging Face "
            "datasets, audit where every row came from, and score predictions. A build goes "
            "source -> build FAMILY STEP -> publish FAMILY; `dvc repro` runs the whole pipeline."
        ),
        epilog="Run `benchsmith COMMAND --help` for the options of one command.",
    )
    parser.add_argument("--version", action="version", version=f"benchsmith {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    words = _positionals(argv)
    verb = words[0] if words else None
    for name, help_text, module in VERBS:
        if verb is None or verb == name:
            module().register(subparsers, words[1:])
        else:
            subparsers.add_parser(name, help=help_text)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        args = build_parser(argv).parse_args(argv)
        result = args.handler(args)
    except BenchsmithError as exc:
        print(f"benchsmith: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(
            "benchsmith: interrupted; completed outputs are intact, rerun to resume",
            file=sys.stderr,
        )
        return 130
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
