"""``benchsmith build FAMILY STEP``: one family's build steps, from the ``FAMILIES`` registry."""

from __future__ import annotations

import argparse
import functools

from benchsmith.commands import family_subparsers
from benchsmith.commands.setting_flags import (
    add_input_flags,
    add_setting_flags,
    inputs_of,
    settings_of,
)
from benchsmith.family.base import PublishRequest, ScoreRunsRequest, Step


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
            add_input_flags(step_parser, step.inputs)
            for settings in step.all_settings:
                add_setting_flags(step_parser, settings)
            step_parser.set_defaults(handler=functools.partial(run_step, step))


def run_step(step: Step, args: argparse.Namespace) -> int:
    """Run a step. A step that makes a published folder returns a request the one publisher
    writes here; a step that needs runs scored gets them scored here by its family's scorer:
    no family calls the publisher or the scoring package itself."""
    inputs = inputs_of(args, step.inputs)
    result = step.run(inputs, *(settings_of(args, settings) for settings in step.all_settings))
    if isinstance(result, PublishRequest):
        from benchsmith.publish.publisher import publish

        publish(result.publication, result.out, result.version, result.max_shard_mb)
        return 0
    if isinstance(result, ScoreRunsRequest):
        from benchsmith.scoring import SCORERS

        scorer = SCORERS.get(result.family)
        scores = {name: scorer.question_points(result.rows, path)
                  for name, path in result.runs.items()}  # fmt: skip
        return result.then(scores)
    return result
