"""Options several subcommands share, defined once so their flags and help read the same."""

from __future__ import annotations

import argparse
from pathlib import Path

PARAMS_HELP = "params file (default: ./params.yaml if present)"


def add_params_option(parser: argparse.ArgumentParser, help_text: str = PARAMS_HELP) -> None:
    """``--params FILE``: every family reads its defaults from the params file."""
    parser.add_argument("--params", type=Path, metavar="FILE", help=help_text)


def add_dataset_version_option(parser: argparse.ArgumentParser) -> None:
    """``--version X.Y.Z`` of a publish step (``dest`` avoids argparse's own ``version``)."""
    parser.add_argument(
        "--version",
        dest="dataset_version",
        metavar="X.Y.Z",
        help="dataset version (default: params version)",
    )
