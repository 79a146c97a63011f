"""``benchsmith report DATASET_DIR``: a page to check a build, or a run, by eye."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

DESCRIPTION = """\
Write one self-contained HTML page about a published folder (any family, or a curated subset of
one), with its charts and contact sheets beside it as PNG files:

  OUT/index.html            every picture inline, no script, nothing fetched: open it anywhere
  OUT/charts/*.png          gold-letter, category and answer distributions; the build's checks
  OUT/contact/CONFIG.png    the items shown for each config, their first image each

The page shows, per config, items spread over it with their images, options and gold answer;
the distributions of gold letters, categories and answers; the checks the family's build ran
(MMIU's shortcut gate with each task's best blind rule and its interval beside chance, VL-ICL's
leakage, MMNeedle's twin and duplicate pictures, MULTI's near duplicates and OCR); and the
provenance (version, code revision, params hash, source roots, libraries).

With --predictions (files `benchsmith predict` wrote): the headline as `benchsmith score`
reports it, the accuracy per category with 95% Wilson intervals (VL-ICL: per shot count too),
and a gallery of wrong answers with their images, gold and reply. The same folder and files
give the same page, byte for byte.
"""


def register(subparsers: argparse._SubParsersAction, words: list[str]) -> None:
    parser = subparsers.add_parser(
        "report",
        help="write an HTML page (and PNGs) to check a dataset, or a model's predictions, by eye",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dataset", type=Path, metavar="DATASET_DIR", help="a published folder")
    parser.add_argument("--predictions", nargs="+", default=[], metavar="[CONFIG=]FILE",
                        help="predictions JSONL of `benchsmith predict`; CONFIG= names the config "
                        "it answers (default: the config whose ids it names)")  # fmt: skip
    parser.add_argument("--config", nargs="+", metavar="CONFIG",
                        help="only these configs (default: every config of samples)")  # fmt: skip
    parser.add_argument("--out", type=Path, metavar="DIR",
                        help="report folder, replaced as a whole (default: reports/NAME, NAME "
                        "the dataset folder's name)")  # fmt: skip
    parser.add_argument("--items", type=int, default=12, metavar="N",
                        help="items shown per config, spread over it (default 12)")  # fmt: skip
    parser.add_argument("--wrong", type=int, default=12, metavar="N",
                        help="wrong answers shown per predictions file (default 12)")  # fmt: skip
    parser.set_defaults(handler=run_report)


def parse_predictions(values: list[str]) -> tuple[tuple[str | None, Path], ...]:
    """``CONFIG=FILE`` or ``FILE`` (a path holding '=' is read as a path when it exists)."""
    parsed = []
    for value in values:
        config, sep, path = value.partition("=")
        if sep and re.fullmatch(r"[A-Za-z0-9_.-]+", config) and not Path(value).exists():
            parsed.append((config, Path(path)))
        else:
            parsed.append((None, Path(value)))
    return tuple(parsed)


def run_report(args: argparse.Namespace) -> int:
    from benchsmith.commands._common import (
        dataset_kind,
        evaluated_as,
        require_sample_config,
        sample_configs,
    )
    from benchsmith.commands.export import split_of
    from benchsmith.core.errors import BenchsmithError
    from benchsmith.core.progress import log
    from benchsmith.report.build import ReportRequest, write_report

    if args.items < 1 or args.wrong < 0:
        raise BenchsmithError("--items must be 1 or more and --wrong 0 or more",
                              fix="e.g. --items 12 --wrong 12")  # fmt: skip
    kind, info = dataset_kind(args.dataset)
    family = evaluated_as(kind, info, args.dataset)
    if family is None:
        raise BenchsmithError("this curated folder was made from a dataset benchsmith did not "
                              "build: no family reads its columns", path=args.dataset,
                              fix="report on the source benchmark's folder")  # fmt: skip
    for config in args.config or []:
        require_sample_config(args.dataset, kind, info, config)
    configs = args.config or sample_configs(kind, info, args.dataset)
    title = f"{family.title}" + (f" (curated: {args.dataset.resolve().name})"
                                 if kind is not family else "")  # fmt: skip
    request = ReportRequest(
        dataset_dir=args.dataset, info=info, title=title, family=family,
        configs=tuple((c, split_of(info, c)) for c in configs),
        checks=tuple(family.report_checks(info)) if kind is family else (),
        predictions=parse_predictions(args.predictions), items=args.items, wrong=args.wrong,
    )  # fmt: skip
    out = args.out or Path("reports") / args.dataset.resolve().name
    summary = write_report(request, out)
    runs = "; ".join(f"{r.config}: {r.headline_name} {r.headline:.4f}" if r.headline is not None
                     else f"{r.config}: {r.overall.correct}/{r.overall.n} right"
                     for r in summary.runs)  # fmt: skip
    log(f"report: {summary.configs} config(s), {summary.items} items, {len(summary.files)} "
        f"PNG file(s){', ' + runs if runs else ''} -> {out / 'index.html'}")  # fmt: skip
    return 0
