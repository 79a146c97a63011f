"""``benchsmith score FAMILY``: score a predictions JSONL against a published dataset.

One subcommand per family so each can document its own answer-extraction policy in ``--help``.
The scorer is imported inside the handler to keep ``benchsmith --help`` fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

MMNEEDLE_DESCRIPTION = """\
Score MMNeedle predictions against one published config (m{M}_n{N}_k{K}) and print a JSON
report to stdout.

Predictions: JSONL, one object per line, {"sample_id": 0, "response": "3, 1, 2"}; extra keys
are ignored, sample_id may be an int or a numeric string, response may be null.

Metrics (coarse to fine, each with a binomial standard error sqrt(p(1-p)/n)):
  existence  positive: the answer locates every present needle and says -1 exactly for the
             absent ones (only K > slots samples, e.g. m1_n2_k5, mix both);
             negative: the answer says every needle is absent (-1).
  index      positive: every needle's image index is right; negative: same as existence.
  exact      positive: every needle's (index, row, col) is right; negative: same as existence.
Top-level numbers are over all samples; "positive" and "negative" break them down.
Every sample of the config is in the denominator: a missing row or null response ("missing")
and an unreadable answer ("unparsed") count as wrong. "per_position" gives per-needle accuracy
of positives by image index (needle depth) and by row,col cell.

Answer parsing (default, lenient): strips whitespace, markdown ticks/bold, quotes, a leading
"Answer:" label and trailing periods; needles are split on ";" (or newlines); each is -1 or
three integers separated by commas/spaces, optionally in brackets. So "1,2,3", "(1, 2, 3)",
"Answer: 1, 2, 3" and "1, 2, 3." all read as 1, 2, 3, and a single "-1" means every needle is
absent. Prose, two numbers or the wrong number of needles is "unparsed".

--strict reproduces the original evaluate.py / evaluate_multi.py string matching (only newline,
space and period clean-up, so "1,2,3" is wrong), except that null responses still count as wrong
instead of being dropped. There "missing" counts absent rows and null responses (an empty string
is scored as the original did), and "unparsed" still reports the lenient parser's count.
"""


VLICL_DESCRIPTION = """\
Score VL-ICL predictions against one published task config (its query split) and print a JSON
report to stdout. Configs: open_mi, matching_mi, clevr, operator_induction,
operator_induction_interleaved.

Predictions: JSONL, one object per line,
  {"query_id": "clevr/query/00007", "n_shot": 4, "seed": 0, "response": "3"}
"id" is accepted for "query_id", "seed" defaults to 0, "response" may be null, extra keys are
ignored. Gold is the "answer" column of the query row with that id.

Report: accuracy as a FRACTION in [0, 1] (the paper prints percent), "overall" pooled over every
scored row and "per_shot" per shot count, each with n, correct and the binomial stderr
sqrt(p(1-p)/n); per shot also "per_seed", "mean_over_seeds" (the paper's 3-seed mean; equal to the
pooled accuracy since every seed has the same denominator) and "std_over_seeds".
Every (n_shot, seed) present in the predictions is scored over EVERY query of the config: an
absent row or a null response counts as wrong ("missing"). Rows with ids that are not queries of
the config are counted in "unknown_ids"; a repeated (query_id, n_shot, seed) row is counted in
"duplicates" and only the first is scored (--strict makes both errors). "unparsed" counts
responses in which the default extraction finds no answer at all.

Normalisation (as in the original evals/eval.py): strip the response, cut it at the first newline,
otherwise at the first "." that is not at position 0. Then, by task (default, fixed):
  operator_induction*  first SIGNED integer (-?\\d+), compared as integers ("-5" can match)
  clevr                first integer or number word zero..twenty ("3 objects", "three" -> 3)
  open_mi              case-insensitive, ignoring quotes, trailing punctuation, an echoed
                       "This is" and a leading article: "A dax." and "This is a dax" -> dax
  matching_mi          the first standalone yes/no word decides; an empty or yes/no-less answer
                       is wrong for Yes- and No-items alike

--legacy-normalisation reproduces the original matching, for comparison with the paper:
operators take the first unsigned \\d+ (negative answers can never match), clevr and open_mi
need an exact (case-insensitive) match ("3 objects", "a dax" are wrong), and a matching No-item
is correct whenever "yes" does not occur, so an empty answer is a correct "No". Null responses
and absent rows still count as wrong in this mode.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add ``score`` with one subcommand per benchmark family."""
    score = subparsers.add_parser(
        "score",
        help="score a predictions JSONL against a published dataset",
        description="Score model predictions against a published benchsmith dataset.",
    )
    families = score.add_subparsers(dest="family", metavar="FAMILY", required=True)
    mmneedle = families.add_parser(
        "mmneedle",
        help="existence / index / exact accuracy for MMNeedle",
        description=MMNEEDLE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    mmneedle.add_argument(
        "--dataset",
        required=True,
        type=Path,
        metavar="DIR",
        help="published MMNeedle folder (the one holding data/<config>/test-*.parquet)",
    )
    mmneedle.add_argument(
        "--config", required=True, metavar="C", help="config name, e.g. m10_n2_k1"
    )
    mmneedle.add_argument(
        "--predictions",
        required=True,
        type=Path,
        metavar="FILE",
        help="predictions JSONL with sample_id and response per line",
    )
    mmneedle.add_argument(
        "--subset",
        choices=("all", "paper"),
        default="all",
        help="all: every sample of the config (default); paper: only the samples the paper "
        "evaluated (paper_eval_subset: first 1,000 positives and negatives for K=1, 100 for K>1)",
    )
    mmneedle.add_argument(
        "--strict",
        action="store_true",
        help="reproduce the original string matching instead of the lenient parser",
    )
    mmneedle.set_defaults(handler=run_mmneedle)
    _register_vlicl(families)


def _register_vlicl(families: argparse._SubParsersAction) -> None:
    vlicl = families.add_parser(
        "vlicl",
        help="accuracy per shot count for VL-ICL image-to-text tasks",
        description=VLICL_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    vlicl.add_argument(
        "--dataset",
        required=True,
        type=Path,
        metavar="DIR",
        help="published VL-ICL folder (the one holding build_info.json and "
        "data/<config>/query-*.parquet)",
    )
    vlicl.add_argument("--config", required=True, metavar="C", help="task config, e.g. clevr")
    vlicl.add_argument(
        "--predictions",
        required=True,
        type=Path,
        metavar="FILE",
        help="predictions JSONL with query_id, n_shot, seed and response per line",
    )
    vlicl.add_argument(
        "--shots",
        type=int,
        metavar="N",
        help="score only the rows with n_shot N (default: every shot count present)",
    )
    vlicl.add_argument(
        "--legacy-normalisation",
        action="store_true",
        help="reproduce the original eval.py matching instead of the fixed one",
    )
    vlicl.add_argument(
        "--strict",
        action="store_true",
        help="error on ids that are not queries of the config and on duplicate rows",
    )
    vlicl.set_defaults(handler=run_vlicl)


def run_mmneedle(args: argparse.Namespace) -> int:
    """Print the MMNeedle report as indented JSON; errors propagate as BenchsmithError."""
    from benchsmith.scoring.mmneedle import score_predictions

    report = score_predictions(
        args.dataset, args.config, args.predictions, strict=args.strict, subset=args.subset
    )
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def run_vlicl(args: argparse.Namespace) -> int:
    """Print the VL-ICL report as indented JSON; errors propagate as BenchsmithError."""
    from benchsmith.scoring.vlicl import score_vlicl

    report = score_vlicl(
        args.dataset,
        args.config,
        args.predictions,
        shots=args.shots,
        mode="legacy" if args.legacy_normalisation else "fixed",
        strict=args.strict,
    )
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0
