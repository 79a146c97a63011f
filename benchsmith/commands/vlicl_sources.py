"""``benchsmith clevr`` and ``benchsmith miniimagenet``: get the VL-ICL raw sources in place.

The full-profile VL-ICL build reads a CLEVR_v1.0 folder and a Ravi-layout MiniImageNet folder
(``vlicl.sources.full`` in params.yaml). These commands fetch or link CLEVR (resumable,
checked against a lock file, extracted with path checks) and convert or verify MiniImageNet.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

DEFAULT_CLEVR_LOCK = Path("clevr.lock.json")


def register(subparsers: argparse._SubParsersAction) -> None:
    clevr = subparsers.add_parser(
        "clevr",
        help="fetch or link CLEVR v1.0 (the VL-ICL count-induction source)",
        description="Get CLEVR v1.0 (scenes JSON + images) for the full VL-ICL build.",
    )
    steps = clevr.add_subparsers(dest="step", metavar="STEP", required=True)
    fetch = steps.add_parser(
        "fetch",
        help="download the official zip (resumable) and extract scenes and train/val images",
        description=(
            "Download CLEVR_v1.0.zip with HTTP Range resume, record its size and sha256 in the lock "
            "file on first download and check them afterwards, then extract the scenes, the "
            "train/val images and the licence with path checks. A second run only verifies."
        ),
    )
    fetch.add_argument("--out", type=Path, required=True, metavar="DIR", help="destination")
    fetch.add_argument("--url", help="zip URL (default: the official dl.fbaipublicfiles.com one)")
    fetch.add_argument(
        "--download-dir",
        type=Path,
        metavar="DIR",
        help="where the zip is kept (default OUT/downloads)",
    )
    fetch.add_argument(
        "--lock", type=Path, default=DEFAULT_CLEVR_LOCK, metavar="FILE", help="lock file"
    )
    fetch.set_defaults(handler=run_clevr_fetch)
    link = steps.add_parser(
        "link",
        help="use an existing CLEVR_v1.0 folder (symlinked, checked)",
        description="Make OUT/CLEVR_v1.0 point at an existing copy after checking its layout.",
    )
    link.add_argument("source", type=Path, metavar="SRC", help="CLEVR_v1.0 folder or its parent")
    link.add_argument("--out", type=Path, required=True, metavar="DIR")
    link.set_defaults(handler=run_clevr_link)

    mini = subparsers.add_parser(
        "miniimagenet",
        help="check or convert MiniImageNet (Ravi-Larochelle split) for VL-ICL",
        description=(
            "MiniImageNet in the Ravi-Larochelle layout: images/ (flat or per class) plus "
            "train.csv, val.csv, test.csv with filename,label. Pickled caches are never opened."
        ),
    )
    steps = mini.add_subparsers(dest="step", metavar="STEP", required=True)
    check = steps.add_parser(
        "check",
        help="verify the layout and the class and image counts (64/16/20 classes x 600)",
        description="Read the CSVs, check every image exists, and check the Ravi counts.",
    )
    check.add_argument("root", type=Path, metavar="DIR")
    check.add_argument(
        "--no-counts", action="store_true", help="skip the 64/16/20 x 600 count check"
    )
    check.set_defaults(handler=run_mini_check)
    convert = steps.add_parser(
        "from-parquet",
        help="convert a Hugging Face parquet copy into the Ravi layout",
        description=(
            "Write OUT/images/*.jpg and OUT/{train,val,test}.csv from parquet files with an image "
            "column and a label column (wnid strings, or ints with ClassLabel names); the split "
            "comes from a split column or the file names (train-*, validation-*, test-*)."
        ),
    )
    convert.add_argument("source", type=Path, metavar="PARQUET_DIR_OR_FILE")
    convert.add_argument("--out", type=Path, required=True, metavar="DIR")
    convert.set_defaults(handler=run_mini_convert)


def run_clevr_fetch(args: argparse.Namespace) -> int:
    from benchsmith.sources.clevr import CLEVR_URL
    from benchsmith.sources.clevr_fetch import fetch_clevr

    root = fetch_clevr(
        args.out, url=args.url or CLEVR_URL, lock_path=args.lock, download_dir=args.download_dir
    )
    print(root)
    return 0


def run_clevr_link(args: argparse.Namespace) -> int:
    from benchsmith.sources.clevr_fetch import link_local_clevr

    print(link_local_clevr(args.source, args.out))
    return 0


def run_mini_check(args: argparse.Namespace) -> int:
    from benchsmith.sources.miniimagenet import (
        RAVI_COUNTS,
        RAVI_IMAGES_PER_CLASS,
        read_miniimagenet,
    )

    counts = not args.no_counts
    mini = read_miniimagenet(
        args.root,
        expect_classes=RAVI_COUNTS if counts else None,
        expect_images_per_class=RAVI_IMAGES_PER_CLASS if counts else None,
    )
    summary = {
        split: {"classes": len(mini.classes(split)), "images": len(images)}
        for split, images in mini.splits.items()
    }
    print(json.dumps({"root": str(mini.root), "layout": mini.layout, "splits": summary}, indent=2))
    return 0


def run_mini_convert(args: argparse.Namespace) -> int:
    from benchsmith.sources.miniimagenet_parquet import miniimagenet_from_hf_parquet

    print(miniimagenet_from_hf_parquet(args.source, args.out))
    return 0
