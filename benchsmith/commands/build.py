"""``benchsmith build FAMILY STEP``: one family's build steps, from the ``FAMILIES`` registry."""

from __future__ import annotations

import argparse

from benchsmith.builders import FAMILIES


def register(subparsers: argparse._SubParsersAction, words: list[str]) -> None:
    wanted = words[0] if words and words[0] in FAMILIES.names() else None
    chosen = [FAMILIES.get(wanted)] if wanted else list(FAMILIES)
    parser = subparsers.add_parser(
        "build",
        help="run one build step of a benchmark family (plan, render, leakage, ...)",
        description="Run one build step of a benchmark family. Families: "
        + "; ".join(
            f"{f.name}: {f.summary} (steps: {', '.join(s.name for s in f.steps)})" for f in chosen
        ),
    )
    families = parser.add_subparsers(dest="family", metavar="FAMILY", required=True)
    for name in FAMILIES.names():
        if name != wanted and wanted is not None:
            families.add_parser(name)  # listed only: this command runs another family
    for family in chosen:
        family_parser = families.add_parser(
            family.name, help=family.summary, description=f"{family.title}: {family.summary}."
        )
        steps = family_parser.add_subparsers(dest="step", metavar="STEP", required=True)
        for step in family.steps:
            step_parser = steps.add_parser(step.name, help=step.help, description=step.description)
            step.add_arguments(step_parser)
            step_parser.set_defaults(handler=step.run)
