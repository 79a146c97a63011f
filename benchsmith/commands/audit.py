"""``benchsmith audit``: verify a published row against its recorded sources."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="verify a published row: source sha256s, captions, re-renders, curation decisions",
        description=(
            "Check one row of a published dataset: every source file in its provenance exists with the recorded "
            "sha256, its captions are in the captions file under the recorded annotation ids, and every stitched "
            "image it uses re-renders from the sources to identical bytes. For a curated dataset: the sample's "
            "stage decisions (kept or dropped, why), and that a kept row is its source row unchanged. Exit 0 "
            "when all holds, 1 naming the file that differs, 2 on bad arguments."
        ),
    )
    parser.add_argument(
        "dataset",
        type=Path,
        metavar="DATASET_DIR",
        help="published dataset folder, e.g. published/mmneedle",
    )
    parser.add_argument(
        "--config", required=True, help="config name, e.g. m10_n2_k1 or haystacks_n4"
    )
    parser.add_argument(
        "--id",
        required=True,
        dest="row_id",
        help="sample_id (sample configs) or stitched_id (haystacks_n{N})",
    )
    parser.add_argument(
        "--captions", type=Path, metavar="FILE", help="captions file if it moved since the build"
    )
    parser.add_argument(
        "--images",
        type=Path,
        metavar="DIR",
        help="COCO val2014/ folder if it moved since the build",
    )
    parser.add_argument(
        "--source",
        type=Path,
        metavar="DIR",
        help="curated datasets: the source dataset folder if it moved since curation",
    )
    parser.set_defaults(handler=run_audit)


def run_audit(args: argparse.Namespace) -> int:
    from benchsmith.sources.published import read_build_info

    family = read_build_info(args.dataset).get("family")
    if family == "curated":
        from benchsmith.publish.curated_audit import audit_curated

        report = audit_curated(args.dataset, args.config, args.row_id, args.source)
    elif family == "vlicl":
        from benchsmith.publish.vlicl_audit import audit_vlicl

        report = audit_vlicl(args.dataset, configs=[args.config], ids=[args.row_id])
    else:
        from benchsmith.publish.audit import audit_mmneedle

        report = audit_mmneedle(args.dataset, args.config, args.row_id, args.captions, args.images)
    print(report.render())
    return 0 if report.ok else 1
