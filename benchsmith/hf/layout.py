"""Write configs and splits in the Hugging Face parquet layout, streaming and content-addressed.

``DIR/data/<config>/<split>-<nnnnn>-<sha256[:16]>.parquet``: the hash in the shard name means a
rebuild with different content gets different file names, so ``load_dataset`` (which caches by
resolved data files) never serves a stale cache. Rows are written in row groups as they come,
so memory stays bounded by one row group, not by the dataset.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq

from benchsmith.core.hashing import sha256_file

DEFAULT_MAX_SHARD_BYTES = 256 * 1024 * 1024


@dataclass
class SplitWritten:
    config: str
    split: str
    num_examples: int = 0
    num_bytes: int = 0  # parquet bytes on disk
    files: list[str] = field(default_factory=list)  # relative to the dataset root


class ShardedWriter:
    """Append row batches; rolls over to a new shard past ``max_shard_bytes`` of arrow data."""

    def __init__(
        self,
        root: Path,
        config: str,
        split: str,
        features: datasets.Features,
        max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
    ):
        self.root = root
        self.folder = root / "data" / config
        self.folder.mkdir(parents=True, exist_ok=True)
        self.schema = features.arrow_schema
        self.max_shard_bytes = max_shard_bytes
        self.result = SplitWritten(config, split)
        self._writer: pq.ParquetWriter | None = None
        self._tmp: Path | None = None
        self._shard_bytes = 0

    def write_rows(self, rows: list[dict]) -> None:
        if rows:
            self.write_table(pa.Table.from_pylist(rows, schema=self.schema))

    def write_table(self, table: pa.Table) -> None:
        if self._writer is None:
            self._open()
        assert self._writer is not None
        self._writer.write_table(table)
        self.result.num_examples += table.num_rows
        self._shard_bytes += int(table.nbytes)
        if self._shard_bytes >= self.max_shard_bytes:
            self._close_shard()

    def _open(self) -> None:
        index = len(self.result.files)
        self._tmp = self.folder / f".{self.result.split}-{index:05d}.parquet.tmp"
        self._writer = pq.ParquetWriter(self._tmp, self.schema, compression="zstd")
        self._shard_bytes = 0

    def _close_shard(self) -> None:
        if self._writer is None or self._tmp is None:
            return
        self._writer.close()
        digest = sha256_file(self._tmp)
        index = len(self.result.files)
        final = self.folder / f"{self.result.split}-{index:05d}-{digest[:16]}.parquet"
        os.replace(self._tmp, final)
        self.result.files.append(final.relative_to(self.root).as_posix())
        self.result.num_bytes += final.stat().st_size
        self._writer = None
        self._tmp = None

    def close(self) -> SplitWritten:
        if self._writer is None and not self.result.files:
            self._open()  # an empty split still gets one (empty) shard so the config loads
        self._close_shard()
        return self.result


def write_split(
    root: Path,
    config: str,
    split: str,
    features: datasets.Features,
    batches: Iterable[list[dict]],
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
) -> SplitWritten:
    writer = ShardedWriter(root, config, split, features, max_shard_bytes)
    for rows in batches:
        writer.write_rows(rows)
    return writer.close()


def configs_info(written: list[SplitWritten]) -> dict[str, dict[str, dict]]:
    """``build_info.json`` ``configs``: ``{config: {split: {num_examples, num_bytes, files}}}``."""
    out: dict[str, dict[str, dict]] = {}
    for item in written:
        out.setdefault(item.config, {})[item.split] = {
            "num_examples": item.num_examples,
            "num_bytes": item.num_bytes,
            "files": list(item.files),
        }
    return {config: out[config] for config in sorted(out)}


def splits_written(configs: dict[str, dict[str, dict]]) -> list[SplitWritten]:
    """The splits a ``build_info.json`` ``configs`` entry records (:func:`configs_info`'s
    inverse), by config and split name."""
    return sorted(
        (SplitWritten(config, split, int(w.get("num_examples", 0)), int(w.get("num_bytes", 0)),
                      list(w.get("files", [])))
         for config, splits in (configs or {}).items() for split, w in splits.items()),
        key=lambda w: (w.config, w.split),
    )  # fmt: skip


def configs_metadata(written: list[SplitWritten], default_config: str | None = None) -> list[dict]:
    """The README ``configs:`` entries: one per config, a glob per split."""
    by_config: dict[str, list[SplitWritten]] = {}
    for item in written:
        by_config.setdefault(item.config, []).append(item)
    entries = []
    for config in sorted(by_config):
        entry: dict = {
            "config_name": config,
            "data_files": [
                {"split": s.split, "path": f"data/{config}/{s.split}-*.parquet"}
                for s in sorted(by_config[config], key=lambda s: s.split)
            ],
        }
        if config == default_config:
            entry["default"] = True
        entries.append(entry)
    return entries


def dataset_info_metadata(
    written: list[SplitWritten], features: dict[str, datasets.Features]
) -> list[dict]:
    """The README ``dataset_info:`` entries (features, split sizes) in the Hub's YAML format."""
    infos = {}
    for config in sorted({w.config for w in written}):
        splits = datasets.SplitDict()
        parts = [w for w in written if w.config == config]
        for item in parts:
            splits.add(
                datasets.SplitInfo(
                    name=item.split, num_bytes=item.num_bytes, num_examples=item.num_examples
                )
            )
        size = sum(item.num_bytes for item in parts)
        infos[config] = datasets.DatasetInfo(
            features=features[config],
            splits=splits,
            download_size=size,
            dataset_size=size,
            config_name=config,
        )
    card_data = datasets.info.DatasetInfosDict(infos)
    from huggingface_hub import DatasetCardData

    data = DatasetCardData()
    card_data.to_dataset_card_data(data)
    info = data.to_dict().get("dataset_info", [])
    return info if isinstance(info, list) else [info]
