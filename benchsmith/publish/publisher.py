"""The one publisher: any :class:`~benchsmith.family.base.Publication` -> a dataset folder.

A family says *what* to write (configs with features and row batches, its part of
``build_info.json``, its card); this writes it the same way for every family:

- the folder is staged next to ``out_dir`` and swapped in whole (``atomic_directory``), so a
  failed or interrupted publish leaves the previous dataset intact;
- every split goes through :func:`benchsmith.hf.layout.write_split` (content-addressed shards,
  one row group per batch, shards rolled over past ``max_shard_mb`` MiB of arrow data);
- ``build_info.json`` has one schema: ``family``, ``version``, ``benchsmith_version``,
  ``code_revision``, ``configs`` (``{config: {split: {num_examples, num_bytes, files}}}``)
  plus the family's own keys;
- the card is the family's template with the Hub YAML (``configs``, ``dataset_info``) the
  publisher derives from what was written; the family's licence terms go into the card and
  ``LICENSE.md``, which ``license_link`` names (the Hub's field for ``license: other``); the
  card, the licence and ``croissant.json`` come from :func:`~.folder_texts.folder_texts`,
  which the audit calls again on the published folder.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import datasets

from benchsmith import __version__
from benchsmith.core.atomic import atomic_directory, atomic_write_json, atomic_write_text
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.progress import log
from benchsmith.core.records import code_revision
from benchsmith.family.base import Publication
from benchsmith.family.publish_settings import DEFAULT_MAX_SHARD_MB
from benchsmith.hf.layout import SplitWritten, configs_info, write_split
from benchsmith.hf.roots import portable_roots
from benchsmith.publish.folder_texts import folder_texts, in_published_order
from benchsmith.publish.row_builds import KEY, count_builds

BUILD_INFO = "build_info.json"


def shard_bytes(max_shard_mb: float) -> int:
    """The shard-size knob, in MiB everywhere (params, flags), as bytes of arrow data."""
    if not max_shard_mb or float(max_shard_mb) <= 0:
        raise BenchsmithError(
            f"max_shard_mb must be a positive number of MiB, got {max_shard_mb!r}",
            fix="set publish.max_shard_mb (or --max-shard-mb) to e.g. 256",
        )
    return max(1, int(float(max_shard_mb) * 1024 * 1024))


def publish(
    publication: Publication,
    out_dir: str | Path,
    version: str,
    max_shard_mb: float = DEFAULT_MAX_SHARD_MB,
) -> dict[str, Any]:
    """Write the dataset folder ``out_dir`` and return its ``build_info``."""
    max_bytes = shard_bytes(max_shard_mb)
    written: list[SplitWritten] = []
    features: dict[str, datasets.Features] = {}
    with atomic_directory(out_dir, inputs=publication.input_paths()) as staging:
        for spec in publication.configs():
            features[spec.name] = spec.features
            for split in spec.splits:
                batches = spec.batches(split, max_bytes)
                written.append(
                    write_split(staging, spec.name, split, spec.features, batches, max_bytes)
                )
        for copied in publication.copy_configs(staging):
            written.append(copied.written)
            features[copied.written.config] = copied.features
        written = in_published_order(written)
        info = {
            **_portable(publication.build_info(written), out_dir),
            **publication.write_extra(staging),
            "family": publication.family,
            "version": version,
            "benchsmith_version": __version__,
            "code_revision": code_revision(),
            "configs": configs_info(written),
            KEY: count_builds(staging, written),  # which code made the rows, recounted by audit
        }
        atomic_write_json(staging / BUILD_INFO, info)
        # rendered from build_info.json as written (keys sorted, tuples as lists), as the
        # audit renders it again
        recorded = json.loads((staging / BUILD_INFO).read_text(encoding="utf-8"))
        texts = folder_texts(publication.card_recipe(), recorded, written, features, staging)
        for name, text in texts.items():
            atomic_write_text(staging / name, text)
    log(f"{publication.summary(info)} -> {out_dir} (version {version})")
    return info


def _portable(info: dict[str, Any], out_dir: Path) -> dict[str, Any]:
    """Source roots recorded relative to the published folder (:mod:`.roots`)."""
    if "roots" in info:
        info = {**info, "roots": portable_roots(info["roots"], out_dir)}
    return info
