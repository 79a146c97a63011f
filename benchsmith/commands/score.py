"""``benchsmith score DIR``: score a predictions JSONL with the dataset's family scorer.

The scorer comes from the ``SCORERS`` registry by the folder's family (a curated folder: the
family its rows came from); each scorer documents its answer-extraction policy and declares
its own options, listed here per family.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path

from benchsmith.commands._common import dataset_kind, require_sample_config
from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring import SCORERS
from benchsmith.scoring.base import unknown_option_error

PREDICTIONS_POLICY = """\
Predictions files (every family): one JSON object per line, blank lines skipped. A line that is
not an object, or a second row for the same id, is an error naming the line(s). Ids that are not
samples of the config are counted in "unknown_ids" with a warning (--strict-ids: an error). A
file without rows prints a warning and exits 1 (--allow-empty scores it: everything missing)."""


def register(subparsers: argparse._SubParsersAction, words: list[str]) -> None:
    policies = "\n\n".join(
        f"== {s.family}: {s.summary} ==\n\n{s.description.rstrip()}" for s in SCORERS
    )
    parser = subparsers.add_parser(
        "score",
        help="score a predictions JSONL against a published dataset",
        description="Score model predictions against one config of a published benchsmith "
        "dataset (or a curated subset of one) and print a JSON report to stdout. The scorer "
        "is the dataset's family's.\n\n" + PREDICTIONS_POLICY + "\n\n" + policies,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dataset", type=Path, metavar="DATASET_DIR", help="a published folder")
    parser.add_argument("--config", required=True, metavar="CONFIG", help="config name")
    given = parser.add_mutually_exclusive_group(required=True)
    given.add_argument("--predictions", type=Path, metavar="FILE", help="predictions JSONL")
    given.add_argument(
        "--from-vlmevalkit", nargs="+", type=Path, metavar="FILE",
        help="VLMEvalKit's prediction file(s) of a `benchsmith export vlmevalkit` TSV "
        "({model}_{dataset}.xlsx, or .tsv/.json with PRED_FORMAT; give the _text and "
        "_text_open datasets' files too): each answer is joined to its sample by the export's "
        "id and config columns and scored as a predictions file",
    )  # fmt: skip
    parser.add_argument(
        "--strict-ids",
        action="store_true",
        help="an id that is not a sample of the config is an error (default: counted in "
        "unknown_ids, with a warning)",
    )
    parser.add_argument(
        "--allow-empty",
        action="store_true",
        help="score an empty predictions file (every sample missing) instead of exiting 1",
    )
    owners: dict[str, list] = {}
    for scorer in SCORERS:
        for option in scorer.options:
            owners.setdefault(option.flag, []).append((scorer.family, option))
    shared = {flag for flag, users in owners.items() if len(users) > 1}
    if shared:  # one flag, a meaning per family (e.g. --legacy: each family's original scorer)
        group = parser.add_argument_group("options of several families")
        for flag in sorted(shared):
            first = owners[flag][0][1]
            meaning = "; ".join(f"{family}: {o.help}" for family, o in owners[flag])
            replace(first, help=meaning).add_to(group)
    for scorer in SCORERS:
        group = parser.add_argument_group(f"{scorer.family} options")
        for option in scorer.options:
            if option.flag not in shared:
                option.add_to(group)
    parser.set_defaults(handler=run_score)


def family_of(dataset_dir: Path, kind, info: dict) -> str:
    """The family whose scorer scores this folder (a curated one: its source's)."""
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
    kind, info = dataset_kind(args.dataset)
    require_sample_config(args.dataset, kind, info, args.config)
    family = family_of(args.dataset, kind, info)
    scorer = SCORERS.get(family)
    for other in SCORERS:
        for option in other.options:
            foreign = other.family != family and option.flag not in {o.flag for o in scorer.options}
            if foreign and not option.is_default(getattr(args, option.dest)):
                raise unknown_option_error(option, other.family, family)
    options = {o.argument: getattr(args, o.dest) for o in scorer.options}
    if args.from_vlmevalkit:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="benchsmith-score-") as scratch:
            args.predictions = _from_vlmevalkit(args, scorer, Path(scratch))
            return _score(args, scorer, options)
    return _score(args, scorer, options)


def _from_vlmevalkit(args: argparse.Namespace, scorer, scratch: Path) -> Path:
    from benchsmith.scoring.vlmevalkit_predictions import to_predictions

    keys = scorer.reference_predictions(args.dataset, args.config)
    path = scratch / "predictions.jsonl"
    joined = to_predictions(list(args.from_vlmevalkit), keys, args.config, path)
    print(f"benchsmith: {joined.read} VLMEvalKit answer(s) read, {joined.joined} joined to "
          f"config {args.config!r} ({len(keys)} samples)"
          + (f", {joined.other_configs} of other configs skipped" if joined.other_configs else "")
          + (f", {joined.unknown} whose id is not a sample of it ignored" if joined.unknown
             else ""), file=sys.stderr)  # fmt: skip
    if joined.unknown and args.strict_ids:
        raise BenchsmithError(
            f"{joined.unknown} VLMEvalKit answer(s) name ids that are not samples of config "
            f"{args.config!r}", path=args.from_vlmevalkit[0],
            fix="give the prediction files of this config's export, or drop --strict-ids",
        )  # fmt: skip
    return path


def _score(args: argparse.Namespace, scorer, options: dict) -> int:
    if not _has_rows(args.predictions):
        print(
            f"benchsmith: warning: {args.predictions} has no prediction rows: every sample "
            "would count as missing",
            file=sys.stderr,
        )
        if not args.allow_empty:
            print(
                "  fix: check the file, or pass --allow-empty to score it anyway", file=sys.stderr
            )
            return 1
    report = scorer.score_file(
        args.dataset, args.config, args.predictions, strict_ids=args.strict_ids, **options
    )
    if report.get("unknown_ids"):
        print(
            f"benchsmith: warning: {report['unknown_ids']} prediction row(s) name ids that are "
            f"not samples of config {args.config!r}; they were ignored (--strict-ids makes "
            "this an error)",
            file=sys.stderr,
        )
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _has_rows(path: Path) -> bool:
    """Whether a predictions file has a non-blank line (a missing file is the scorer's error)."""
    if not path.is_file():
        return True
    with path.open("rb") as handle:
        return any(line.strip() for line in handle)
