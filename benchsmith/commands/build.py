"""``benchsmith build FAMILY STEP``: one family's build steps, from the ``FAMILIES`` registry."""

from __future__ import annotations

import argparse

from benchsmith.commands import family_subparsers


def register(subparsers: argparse._SubParsersAction, words: list[str]) -> None:
    parser = subparsers.add_parser(
        "build", help="run one build step of a benchmark family (plan, render, leakage, ...)"
    )
    families, chosen = family_subparsers(parser, words)
    parser.description = "Run one build step of a benchmark family. Families: " + "; ".join(
        f"{f.name}: {f.summary} (steps: {', '.join(s.name for s in f.steps)})" for f in chosen
    )
    for family in chosen:
        family_parser = families.add_parser(
            family.name, help=family.summary, description=f"{family.title}: {family.summary}."
        )
        steps = family_parser.add_subparsers(dest="step", metavar="STEP", required=True)
        for step in family.steps:
            step_parser = steps.add_parser(step.name, help=step.help, description=step.description)
            step.add_arguments(step_parser)
            step_parser.set_defaults(handler=step.run)
