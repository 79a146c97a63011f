"""Flags several verbs share that are not a family's inputs: ``--params`` and ``--metrics``
(a family's steps declare theirs with :mod:`benchsmith.core.command_inputs`). Imports nothing
heavy: ``benchsmith source`` reads these too."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchsmith.core.command_inputs import PARAMS_HELP


def add_params_option(parser: argparse.ArgumentParser) -> None:
    """``--params FILE``: the command reads its defaults from it."""
    parser.add_argument("--params", type=Path, metavar="FILE", help=PARAMS_HELP)


def add_metrics_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--metrics FILE``: the DVC metrics file (:mod:`benchsmith.core.metrics`)."""
    parser.add_argument(
        "--metrics",
        type=Path,
        metavar="FILE",
        help=f"also write the {what} counts as a DVC metrics file (JSON of numbers)",
    )
