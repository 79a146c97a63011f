"""``benchsmith export vlmevalkit``: hand a published benchmark to the harnesses people use."""

from __future__ import annotations

import argparse
from pathlib import Path

DESCRIPTION = """\
Write a published benchsmith folder in a harness's own format.

  vlmevalkit  one TSV as VLMEvalKit reads a custom dataset: index, image (base64; a list of
              base64 strings for several images), question, option columns A..., answer,
              category, l2-category, plus id (the published sample id). MMIU: every task, as
              multiple choice; MULTI: SA (multiple choice) and FB (short answer), the rest
              counted and left out; MMNeedle and VL-ICL (query split, zero-shot): short answer.

Every image is the published image's bytes, base64-encoded (decode one to get the file back).
"""


def register(subparsers: argparse._SubParsersAction, words: list[str]) -> None:
    parser = subparsers.add_parser(
        "export",
        help="export a published dataset for an evaluation harness (VLMEvalKit TSV)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("harness", choices=("vlmevalkit",), help="the target harness")
    parser.add_argument("dataset", type=Path, metavar="DATASET_DIR", help="a published folder")
    parser.add_argument("--out", type=Path, required=True, metavar="FILE.tsv",
                        help="the TSV to write (replaced atomically)")  # fmt: skip
    parser.add_argument("--config", action="append", metavar="C",
                        help="configs to export (repeatable; default: every config of samples "
                        "except those that repeat another's, such as MULTI's elite and MMIU's "
                        "circular)")  # fmt: skip
    parser.set_defaults(handler=run_export)


def split_of(info: dict, config: str) -> str:
    """The split a harness evaluates: ``query`` (VL-ICL), else ``test``, else the only one."""
    splits = list((info.get("configs") or {}).get(config) or {})
    for name in ("query", "test"):
        if name in splits:
            return name
    return splits[0] if splits else "test"


def run_export(args: argparse.Namespace) -> int:
    from benchsmith.builders.base import Family
    from benchsmith.builders.requests import RequestSource
    from benchsmith.commands._common import dataset_kind, require_sample_config, sample_configs
    from benchsmith.core.errors import BenchsmithError
    from benchsmith.core.progress import log
    from benchsmith.exports.vlmevalkit import write_tsv

    kind, info = dataset_kind(args.dataset)
    if not isinstance(kind, Family):
        raise BenchsmithError("only a benchmark family's folder can be exported",
                              path=args.dataset, fix="export the source benchmark's folder")  # fmt: skip
    configs = args.config or [c for c in sample_configs(kind, info, args.dataset)
                              if c not in kind.repeated_configs]  # fmt: skip
    for config in configs:
        require_sample_config(args.dataset, kind, info, config)

    def rows():
        for config in configs:
            source = RequestSource(args.dataset, info, config, split_of(info, config))
            for row in kind.harness_rows(source):
                yield config, row

    summary = write_tsv(rows, args.out)
    total = sum(int((info.get("configs") or {}).get(c, {}).get(split_of(info, c), {})
                    .get("num_examples", 0)) for c in configs)  # fmt: skip
    left = total - summary.rows
    log(f"export vlmevalkit: {summary.rows} rows ({summary.multiple_choice} multiple choice, "
        f"{summary.short_answer} short answer) from {len(configs)} config(s) -> {args.out}"
        + (f"; {left} sample(s) have no single-turn form and were left out" if left > 0 else ""))  # fmt: skip
    return 0
