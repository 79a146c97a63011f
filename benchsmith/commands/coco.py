"""``benchsmith coco``: put COCO 2014 val on disk (a miniature sample, a download, or a link)."""

from __future__ import annotations

import argparse
from pathlib import Path

from benchsmith.commands._common import add_params_option
from benchsmith.core.params import load_params, profile_of, section
from benchsmith.core.progress import log
from benchsmith.sources.coco import ANNOTATIONS_ZIP_URL, CAPTIONS_RELPATH, IMAGES_ZIP_URL
from benchsmith.sources.coco_fetch import fetch_coco, link_local_coco
from benchsmith.sources.coco_sample import write_sample_coco
from benchsmith.sources.lockfile import DEFAULT_LOCK_PATH

DEFAULT_DOWNLOAD_DIR = Path("data/downloads/coco")
DEFAULT_N_IMAGES = 660


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "coco",
        help="get COCO 2014 val captions and images (sample, download or local copy)",
        description=(
            "Put COCO 2014 val on disk in its real layout: OUT/annotations/captions_val2014.json "
            "and OUT/val2014/*.jpg."
        ),
    )
    commands = parser.add_subparsers(dest="coco_command", metavar="SUBCOMMAND", required=True)

    sample = commands.add_parser(
        "sample",
        help="write a synthetic miniature COCO (offline, seconds)",
        description="Write a synthetic miniature of COCO 2014 val with the real file format.",
    )
    _add_out(sample)
    sample.add_argument(
        "--n-images",
        type=int,
        default=DEFAULT_N_IMAGES,
        metavar="N",
        help=f"number of images in the miniature, 1-990 (default: {DEFAULT_N_IMAGES})",
    )
    sample.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="SEED",
        help="seed for ids, colours and captions (default: 0)",
    )
    sample.set_defaults(handler=run_sample)

    fetch = commands.add_parser(
        "fetch",
        help="download, verify and extract the real COCO 2014 val",
        description=(
            "Download annotations_trainval2014.zip and val2014.zip (resumable), verify them "
            "against the lock file (recording them on first download), and extract the "
            "captions file and the val2014 images. Safe to rerun."
        ),
    )
    _add_out(fetch)
    _add_download_options(fetch)
    fetch.set_defaults(handler=run_fetch)

    prepare = commands.add_parser(
        "prepare",
        help="sample or fetch/link COCO, as params.yaml's profile says",
        description=(
            "Do what params.yaml asks for: `profile: sample` writes the miniature "
            "(coco.sample.n_images, seed); `profile: full` links coco.full.local_dir when set, "
            "otherwise downloads from coco.full.annotations_url / images_url."
        ),
    )
    _add_out(prepare)
    add_params_option(
        prepare,
        help_text="params file to read (default: params.yaml in the current folder, if present)",
    )
    prepare.add_argument(
        "--lock",
        type=Path,
        default=DEFAULT_LOCK_PATH,
        metavar="FILE",
        help=f"checksum lock file used when downloading (default: {DEFAULT_LOCK_PATH})",
    )
    prepare.set_defaults(handler=run_prepare)


def _add_out(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="DIR",
        help="folder that receives annotations/captions_val2014.json and val2014/",
    )


def _add_download_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--download-dir",
        type=Path,
        default=DEFAULT_DOWNLOAD_DIR,
        metavar="DIR",
        help=f"where the zips are downloaded and kept for reruns (default: {DEFAULT_DOWNLOAD_DIR})",
    )
    parser.add_argument(
        "--annotations-url",
        default=ANNOTATIONS_ZIP_URL,
        metavar="URL",
        help="URL of annotations_trainval2014.zip (default: the official COCO server)",
    )
    parser.add_argument(
        "--images-url",
        default=IMAGES_ZIP_URL,
        metavar="URL",
        help="URL of val2014.zip (default: the official COCO server)",
    )
    parser.add_argument(
        "--lock",
        type=Path,
        default=DEFAULT_LOCK_PATH,
        metavar="FILE",
        help=(
            "lock file with the expected size and sha256 of each URL; written on first "
            f"download, checked afterwards (default: {DEFAULT_LOCK_PATH})"
        ),
    )


def run_sample(args: argparse.Namespace) -> int:
    out = write_sample_coco(args.out, n_images=args.n_images, seed=args.seed)
    log(f"wrote a {args.n_images}-image COCO sample (seed {args.seed}) to {out}")
    return 0


def run_fetch(args: argparse.Namespace) -> int:
    out = fetch_coco(
        args.out,
        download_dir=args.download_dir,
        annotations_url=args.annotations_url,
        images_url=args.images_url,
        lock_path=args.lock,
    )
    log(f"COCO 2014 val ready in {out} ({CAPTIONS_RELPATH})")
    return 0


def run_prepare(args: argparse.Namespace) -> int:
    params = load_params(args.params)
    if profile_of(params) == "sample":
        n_images = int(section(params, "coco", "sample").get("n_images", DEFAULT_N_IMAGES))
        seed = int(params.get("seed", 0))
        out = write_sample_coco(args.out, n_images=n_images, seed=seed)
        log(f"wrote a {n_images}-image COCO sample (seed {seed}) to {out}")
        return 0
    full = section(params, "coco", "full")
    if full.get("local_dir"):
        out = link_local_coco(Path(full["local_dir"]), args.out)
        log(f"linked the local COCO copy {full['local_dir']} into {out}")
        return 0
    out = fetch_coco(
        args.out,
        download_dir=Path(full.get("download_dir") or DEFAULT_DOWNLOAD_DIR),
        annotations_url=full.get("annotations_url") or ANNOTATIONS_ZIP_URL,
        images_url=full.get("images_url") or IMAGES_ZIP_URL,
        lock_path=args.lock,
    )
    log(f"COCO 2014 val ready in {out}")
    return 0
