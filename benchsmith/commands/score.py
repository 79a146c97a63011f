"""``benchsmith score DIR``: score a predictions JSONL with the dataset's family scorer.

The scorer comes from the ``SCORERS`` registry by the folder's family (a curated folder: the
family its rows came from); each scorer documents its answer-extraction policy and declares
its own options, listed here per family.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchsmith.commands._common import dataset_kind
from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring import SCORERS
from benchsmith.scoring.base import unknown_option_error


def register(subparsers: argparse._SubParsersAction, words: list[str]) -> None:
    policies = "\n\n".join(
        f"== {s.family}: {s.summary} ==\n\n{s.description.rstrip()}" for s in SCORERS
    )
    parser = subparsers.add_parser(
        "score",
        help="score a predictions JSONL against a published dataset",
        description="Score model predictions against one config of a published benchsmith "
        "dataset (or a curated subset of one) and print a JSON report to stdout. The scorer "
        "is the dataset's family's.\n\n" + policies,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dataset", type=Path, metavar="DATASET_DIR", help="a published folder")
    parser.add_argument("--config", required=True, metavar="C", help="config name")
    parser.add_argument(
        "--predictions", required=True, type=Path, metavar="FILE", help="predictions JSONL"
    )
    for scorer in SCORERS:
        group = parser.add_argument_group(f"{scorer.family} options")
        for option in scorer.options:
            option.add_to(group)
    parser.set_defaults(handler=run_score)


def family_of(dataset_dir: Path) -> str:
    kind, info = dataset_kind(dataset_dir)
    if hasattr(kind, "source_family"):  # a curated folder is scored as its source family
        family = kind.source_family(info)
        if family is None:
            raise BenchsmithError(
                "this curated dataset was made from a dataset benchsmith did not build, so "
                "there is no family scorer for it",
                path=dataset_dir / "build_info.json",
                fix="score the source benchmark's predictions with its own tools",
            )
        return family
    return kind.name


def run_score(args: argparse.Namespace) -> int:
    family = family_of(args.dataset)
    scorer = SCORERS.get(family)
    for other in SCORERS:
        for option in other.options:
            foreign = other.family != family and option not in scorer.options
            if foreign and not option.is_default(getattr(args, option.dest)):
                raise unknown_option_error(option, other.family, family)
    options = {o.dest: getattr(args, o.dest) for o in scorer.options}
    report = scorer.score_file(args.dataset, args.config, args.predictions, **options)
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0
