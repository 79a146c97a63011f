"""``benchsmith audit DIR``: re-derive published rows from their sources, for any family."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchsmith.commands._common import add_root_option, dataset_kind, parse_roots

DESCRIPTION = """\
Prove where published rows came from. For every row selected (all rows by default; --config
and --id narrow it down), every source file named in its provenance must exist with its
recorded sha256 (each file is hashed once), and the family re-derives the row from those
sources and its recorded settings:

  mmneedle  stitched images re-render byte-identically from their COCO cells; a sample's
            captions are in the captions file under their annotation ids and its haystack's
            stitched images re-render
  vlicl     embedded images equal their source files, operator images re-render with the
            recorded font, CLEVR answers recount from the scenes; episodes name published rows
  curated   the decision log and the source files are unchanged, each row carries exactly its
            decisions and its source row is unchanged; an --id that curation dropped shows the
            stage and reason that removed it

Exit 0 when everything holds, 1 with a line per difference (config/row [column] and the file
involved), 2 on bad arguments.
"""


def register(subparsers: argparse._SubParsersAction, words: list[str]) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="verify published rows against their sources (re-render, recount, re-check)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dataset", type=Path, metavar="DATASET_DIR", help="a published folder")
    parser.add_argument(
        "--config", nargs="+", metavar="C", help="only these configs (default: every config)"
    )
    parser.add_argument(
        "--id",
        nargs="+",
        dest="row_ids",
        metavar="ID",
        help="only these rows: sample_id (MMNeedle samples), stitched_id (haystacks_n{N}), id "
        "(VL-ICL, e.g. clevr/query/00003), the source id (curated)",
    )
    add_root_option(parser)
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
    )
    print(report.render())
    return 0 if report.ok else 1
