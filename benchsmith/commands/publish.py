"""``benchsmith publish FAMILY``: write a family's built data as a versioned HF dataset folder.

The family says what its inputs are (its publish flags) and what to write; the one publisher
writes every family the same way (atomic folder, content-addressed shards, one build_info
schema, the card from the family's template).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchsmith.builders import FAMILIES
from benchsmith.commands import family_subparsers
from benchsmith.core.params import add_params_option, load_params, section


def register(subparsers: argparse._SubParsersAction, words: list[str]) -> None:
    parser = subparsers.add_parser(
        "publish",
        help="write a family's build as a Hugging Face dataset folder (card, build_info, shards)",
        description="Write a versioned Hugging Face dataset folder from a family's build: "
        "data/<config>/<split>-*.parquet (content-addressed shards), README.md (the dataset card "
        "with the configs YAML) and build_info.json. Loads offline with "
        "datasets.load_dataset(DIR, CONFIG).",
    )
    families, chosen = family_subparsers(parser, words)
    for family in chosen:
        p = families.add_parser(
            family.name,
            help=f"publish {family.title}",
            description=f"Publish {family.title} ({family.summary}).",
        )
        family.add_publish_arguments(p)
        p.add_argument(
            "--version",
            dest="dataset_version",
            metavar="X.Y.Z",
            help="dataset version (default: params version)",
        )
        p.add_argument(
            "--max-shard-mb",
            type=float,
            metavar="MiB",
            help=f"shard size limit in MiB of arrow data (default: {family.name}.publish."
            "max_shard_mb, 256)",
        )
        add_params_option(p)
        p.add_argument(
            "--out",
            type=Path,
            metavar="DIR",
            help=f"dataset folder (default: {family.name}.publish.out, published/{family.name})",
        )
        p.set_defaults(handler=run_publish)


def run_publish(args: argparse.Namespace) -> int:
    from benchsmith.publish.publisher import DEFAULT_MAX_SHARD_MB, publish

    family = FAMILIES.get(args.family)
    params = load_params(args.params)
    knobs = section(params, family.name, "publish")
    out = args.out or family.default_out(params)
    version = args.dataset_version or str(params.get("version", "0.0.0"))
    max_mb = args.max_shard_mb or float(knobs.get("max_shard_mb", DEFAULT_MAX_SHARD_MB))
    publish(family.publication(args), out, version, max_mb)
    return 0
