"""``benchsmith audit DIR``: re-derive published rows from their sources, for any family."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from benchsmith.commands._common import (
    add_root_option,
    dataset_kind,
    dataset_kinds,
    parse_roots,
)
from benchsmith.core.workers import usable_cores

DESCRIPTION = """\
Prove where published rows came from. For every row selected (all rows by default; --config
and --id narrow it down), every source file named in its provenance must exist with its
recorded sha256 (each file is hashed once), and the dataset's family re-derives the row from
those sources and its recorded settings:

{kinds}

Exit 0 when everything holds, 1 with a line per difference (config/row [column] and the file
involved), 2 on bad arguments.
"""


def register(subparsers: argparse._SubParsersAction, words: list[str]) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="verify published rows against their sources (re-render, recount, re-check)",
        description=DESCRIPTION.format(
            kinds="\n".join(
                textwrap.fill(
                    k.audit_help, 92, initial_indent=f"  {k.name:<9} ", subsequent_indent=" " * 12
                )
                for k in dataset_kinds()
            )
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dataset", type=Path, metavar="DATASET_DIR", help="a published folder")
    parser.add_argument(
        "--config", nargs="+", metavar="CONFIG", help="only these configs (default: every config)"
    )
    parser.add_argument(
        "--id",
        nargs="+",
        dest="row_ids",
        metavar="ID",
        help="only these rows (what an id is, per family: see above)",
    )
    add_root_option(parser)
    parser.add_argument(
        "--workers",
        type=int,
        default=usable_cores(),
        metavar="N",
        help="processes for bulk re-derivation, e.g. re-rendering every image (default: usable cores)",
    )
    parser.set_defaults(handler=run_audit)


def run_audit(args: argparse.Namespace) -> int:
    from benchsmith.publish.audit import audit_dataset

    kind, _ = dataset_kind(args.dataset)
    report = audit_dataset(
        args.dataset,
        kind,
        configs=args.config,
        ids=args.row_ids,
        roots=parse_roots(args.root, kind),
        workers=args.workers,
    )
    print(report.render())
    return 0 if report.ok else 1
