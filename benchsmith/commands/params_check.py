"""Check ``params.yaml`` against the schema of what a command reads, before it runs.

Top-level keys are always checked: the build's own (profile, version, seed, image limits)
fully, and the owners' blocks by name (``sources``, one per family, ``curate``), so a misspelt
block name is caught by any command. The blocks the command reads are checked in depth, with
the schema their owner declares: ``sources.<name>`` from that source's options, ``<family>:``
from the family (plus the ``publish:`` block every family shares), ``curate:`` from the
curation stages. The scope is what the command's DVC stage lists under ``params:``, so a
command loads only the code it runs, and an edit to one family's schema reruns none of
another family's stages.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from benchsmith.core.limits import ArchiveLimits, ImageLimits
from benchsmith.core.params import BuildSettings
from benchsmith.core.schema import Block, BlockOf, Value, check_document
from benchsmith.core.settings import settings_block

# the build's own settings, declared at the ground floor: the top-level keys, then two blocks
TOP_LEVEL_BLOCKS: dict[tuple[str, ...], type] = {
    (): BuildSettings,  # profile, version, seed
    ("images",): ImageLimits,
    ("archives",): ArchiveLimits,
}
ANY_MAPPING = BlockOf(Value("any"))  # a block this command does not read: its name is checked


def blocks_read(args: argparse.Namespace) -> tuple[str, ...]:
    """The params blocks the parsed command reads (``sources.coco``, ``mmneedle``, ``curate``)."""
    command = getattr(args, "command", None)
    if command == "source" and getattr(args, "source_name", None):
        return (f"sources.{args.source_name}",)
    if command in ("build", "publish") and getattr(args, "family", None):
        return (args.family,)
    if command == "curate":
        return ("curate",)
    return ()


def params_schema(scope: tuple[str, ...] = ()) -> Block:
    """The schema of the whole file, with the blocks in ``scope`` in depth."""
    from benchsmith.builders import FAMILIES
    from benchsmith.sources import SOURCES

    sources = {
        name: SOURCES.get(name).params_schema() if f"sources.{name}" in scope else ANY_MAPPING
        for name in SOURCES.names()
    }
    fields: dict[str, Any] = {
        **settings_block(BuildSettings).fields,  # profile, version, seed
        **{block[0]: settings_block(kind) for block, kind in TOP_LEVEL_BLOCKS.items() if block},
        "sources": Block(sources),
    }
    for name in FAMILIES.names():
        if name in scope:
            family = FAMILIES.get(name)
            publish = settings_block(family.publish_settings)
            fields[name] = Block({**family.params_fields(), "publish": publish})
        else:
            fields[name] = ANY_MAPPING
    if "curate" in scope:
        from benchsmith.curate.config import params_schema as curate_schema

        fields["curate"] = curate_schema()
    else:
        fields["curate"] = ANY_MAPPING
    return Block(fields)


def check_params(params: dict[str, Any], path: str | Path, scope: tuple[str, ...] = ()) -> None:
    """Raise a :class:`BenchsmithError` listing every unknown key and mistyped value."""
    if params:
        check_document(params_schema(scope), params, path)
