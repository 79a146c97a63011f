"""The ``benchsmith`` command: one entry point, one subcommand per family and per tool.

Errors a user can fix (:class:`BenchsmithError`) print as a short message naming the file and
the fix, with exit code 2; everything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from benchsmith import __version__
from benchsmith.core.errors import BenchsmithError


def build_parser() -> argparse.ArgumentParser:
    from benchsmith.commands import (
        audit,
        coco,
        curate,
        mmneedle,
        predict,
        score,
        vlicl,
        vlicl_sources,
    )

    parser = argparse.ArgumentParser(
        prog="benchsmith",
        description=(
            "Rebuild multimodal LLM benchmarks from their raw sources as versioned Hugging Face "
            "datasets, audit where every row came from, and score predictions."
        ),
        epilog="Run `benchsmith COMMAND --help` for the options of one command.",
    )
    parser.add_argument("--version", action="version", version=f"benchsmith {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (coco, mmneedle, vlicl_sources, vlicl, predict, curate, audit, score):
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
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
