"""``benchsmith publish FAMILY``: write a family's built data as a versioned HF dataset folder.

The family says what its inputs are (its publish flags) and what to write; the one publisher
writes every family the same way (atomic folder, content-addressed shards, one build_info
schema, the card from the family's template).
"""

from __future__ import annotations

import argparse

from benchsmith.builders import FAMILIES
from benchsmith.commands import family_subparsers
from benchsmith.commands.setting_flags import (
    add_input_flags,
    add_setting_flags,
    inputs_of,
    settings_of,
)
from benchsmith.core.params import build_settings, load_params
from benchsmith.family.base import StepSettings
from benchsmith.family.publish_settings import PublishRun


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
        add_input_flags(p, family.publish_inputs)
        add_input_flags(p, PublishRun)
        add_setting_flags(p, StepSettings(family.publish_settings, (family.name, "publish")))
        p.set_defaults(handler=run_publish)


def run_publish(args: argparse.Namespace) -> int:
    from benchsmith.publish.publisher import publish

    family = FAMILIES.get(args.family)
    run = inputs_of(args, PublishRun)
    settings = settings_of(args, StepSettings(family.publish_settings, (family.name, "publish")))
    version = run.dataset_version or build_settings(load_params(run.params)).version
    publication = family.publication(inputs_of(args, family.publish_inputs), settings)
    info = publish(publication, family.out_of(settings), version, settings.max_shard_mb)
    if run.metrics is not None:
        from benchsmith.core.metrics import write_metrics

        write_metrics(run.metrics, family.metrics(info))
    return 0
