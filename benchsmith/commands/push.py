"""``benchsmith push DIR --repo OWNER/NAME``: a published folder to a Hub repo, tagged."""

from __future__ import annotations

import argparse
from pathlib import Path

DESCRIPTION = """\
Upload a published benchsmith folder to a Hugging Face Hub dataset repo (created if missing) and
tag the commit with the dataset's version, so `load_dataset(REPO, CONFIG, revision=TAG)` gets
exactly this build.

  endpoint  $HF_ENDPOINT (default https://huggingface.co)
  token     $HF_TOKEN (or the token `hf auth login` stored); never printed or written
  tag       --tag, default v<version> from build_info.json

Before uploading, the card's metadata is checked (license, task_categories, size_categories,
source_datasets, configs, dataset_info) and sent to the Hub's YAML validation. A version is
immutable: if the tag exists with the same files, nothing is uploaded; with other files, the
push is refused (publish with a new --version). The branch's data/ folder is replaced by this
build's (an older version's shards stay under its tag); other files in the repo are kept.
"""


def register(subparsers: argparse._SubParsersAction, words: list[str]) -> None:
    parser = subparsers.add_parser(
        "push",
        help="upload a published dataset to a Hub dataset repo and tag its version",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("dataset", type=Path, metavar="PUBLISHED_DIR", help="a published folder")
    parser.add_argument("--repo", required=True, metavar="OWNER/NAME", help="the dataset repo")
    parser.add_argument("--tag", metavar="vX.Y.Z", help="default: v<version> of build_info.json")
    parser.add_argument("--private", action="store_true", help="create the repo private")
    parser.set_defaults(handler=run_push)


def run_push(args: argparse.Namespace) -> int:
    from benchsmith.core.errors import BenchsmithError
    from benchsmith.core.progress import log
    from benchsmith.publish.push import push_folder

    if args.repo.count("/") != 1 or not all(args.repo.split("/")):
        raise BenchsmithError(f"--repo {args.repo!r} is not OWNER/NAME",
                              fix="e.g. --repo my-org/mmneedle")  # fmt: skip
    result = push_folder(args.dataset, args.repo, args.tag, args.private)
    if result.already:
        log(f"push: {result.repo}@{result.tag} already holds these {result.files} files; "
            "nothing uploaded")  # fmt: skip
    else:
        log(f"push: {result.files} files ({result.bytes / 1e6:.1f} MB) -> {result.repo}, commit "
            f"{result.commit[:12]}, tag {result.tag}")  # fmt: skip
    return 0
