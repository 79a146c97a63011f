"""The texts a publisher writes beside the shards: the card, ``LICENSE.md``, ``croissant.json``.

One function makes them from what a published folder keeps (``build_info.json``, the shards and
their features) and the family's :class:`~benchsmith.family.base.CardRecipe`. The publisher
writes what it returns; a whole audit calls it again on the published folder and compares byte
for byte (:mod:`benchsmith.publish.folder_audit`), so a sentence, a number, a licence claim or a
checksum changed in any of them is found, and named by the field or line that differs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import datasets
import pyarrow.parquet as pq

from benchsmith.family.base import CardRecipe
from benchsmith.hf.card import render_card, size_category
from benchsmith.hf.layout import SplitWritten, configs_metadata, dataset_info_metadata
from benchsmith.publish.croissant import croissant, croissant_text

CARD_FILE = "README.md"
CROISSANT_FILE = "croissant.json"
LICENSE_FILE = "LICENSE.md"  # the terms a `license: other` card links to


def in_published_order(written: list[SplitWritten]) -> list[SplitWritten]:
    """Splits in the one order both the publisher and the audit use (config, then split name:
    the order ``build_info.json`` keeps them in)."""
    return sorted(written, key=lambda w: (w.config, w.split))


def folder_texts(
    recipe: CardRecipe,
    info: dict[str, Any],
    written: list[SplitWritten],
    features: dict[str, datasets.Features],
    folder: Path,
) -> dict[str, str]:
    """``{file name: text}`` of the card, the licence (when the family has terms) and the
    Croissant file of the folder whose shards are under ``folder``."""
    written = in_published_order(written)
    card = recipe.make(info, written)
    metadata = {
        "size_categories": [size_category(sum(w.num_examples for w in written))],
        **card.metadata,
        "version": info["version"],
        "configs": configs_metadata(written, card.default_config),
        "dataset_info": dataset_info_metadata(written, features),
    }
    texts: dict[str, str] = {}
    if card.license_text:
        name = metadata.get("pretty_name", recipe.family)
        texts[LICENSE_FILE] = f"# Licence: {name}\n\n{card.license_text}"
        metadata["license_link"] = LICENSE_FILE
    audit = {"how": recipe.audit_how, "not_rederived": recipe.not_rederived}
    context = {**card.context, "audit": audit, "license_text": card.license_text}
    texts[CARD_FILE] = render_card(recipe.template, metadata, context)
    document = croissant(folder, metadata, info, written, features, card.rai, card.license_text)
    texts[CROISSANT_FILE] = croissant_text(document)
    return texts


def features_in(folder: Path, written: list[SplitWritten]) -> dict[str, datasets.Features]:
    """Each config's features as its first shard records them (the ``huggingface`` schema
    metadata every shard is written with)."""
    features: dict[str, datasets.Features] = {}
    for split in written:
        if split.config not in features and split.files:
            schema = pq.read_schema(folder / split.files[0])
            features[split.config] = datasets.Features.from_arrow_schema(schema)
    return features
