"""Write configs and splits in the Hugging Face parquet layout, streaming and content-addressed.

``DIR/data/<config>/<split>-<nnnnn>-<sha256[:16]>.parquet``: the hash in the shard name means a
rebuild with different content gets different file names, so ``load_dataset`` (which caches by
resolved data files) never serves a stale cache. Rows are written in row groups as they come,
so memory stays bounded by two row groups (one written while the next is built), not by the
dataset.

Binary columns (an ``Image`` feature's ``bytes``: encoded JPEG or PNG) are written without a
codec, a dictionary or min/max statistics, in pages of a few images at most; every other column
is zstd-compressed as before. Each shard is hashed as it is written, not read back for it.
"""

from __future__ import annotations

import functools
import hashlib
import io
import os
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import datasets
import pyarrow as pa
import pyarrow.parquet as pq

DEFAULT_MAX_SHARD_BYTES = 256 * 1024 * 1024


@dataclass
class SplitWritten:
    config: str
    split: str
    num_examples: int = 0
    num_bytes: int = 0  # parquet bytes on disk
    files: list[str] = field(default_factory=list)  # relative to the dataset root
    # each file's sha256, when this process wrote it (never recorded: the audit hashes files)
    digests: dict[str, str] = field(default_factory=dict, compare=False, repr=False)


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
        self._sink: HashingFile | None = None
        self._tmp: Path | None = None
        self._shard_bytes = 0

    def write_rows(self, rows: list[dict] | pa.Table) -> None:
        """One row group: dicts in the features, or a table with their schema."""
        table = self.table_of(rows)
        if table.num_rows:
            self.write_table(table)

    def table_of(self, rows: list[dict] | pa.Table) -> pa.Table:
        """``rows`` as a table of the config's schema (checked when given as a table)."""
        if not isinstance(rows, pa.Table):
            return pa.Table.from_pylist(rows, schema=self.schema)
        if not rows.schema.equals(self.schema, check_metadata=False):
            raise ValueError(
                f"{self.result.config}/{self.result.split}: a batch's schema is not the "
                f"config's features:\n{rows.schema}\n!=\n{self.schema}"
            )
        return rows

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
        self._tmp.unlink(missing_ok=True)  # left by an interrupted run of this staging folder
        self._sink = HashingFile(self._tmp)
        self._writer = pq.ParquetWriter(self._sink, self.schema, **shard_options(self.schema))
        self._shard_bytes = 0

    def _close_shard(self) -> None:
        if self._writer is None or self._tmp is None or self._sink is None:
            return
        self._writer.close()
        self._sink.close()
        digest = self._sink.hexdigest()
        index = len(self.result.files)
        final = self.folder / f"{self.result.split}-{index:05d}-{digest[:16]}.parquet"
        os.replace(self._tmp, final)
        name = final.relative_to(self.root).as_posix()
        self.result.files.append(name)
        self.result.digests[name] = digest
        self.result.num_bytes += self._sink.size
        self._writer = None
        self._sink = None
        self._tmp = None

    def close(self) -> SplitWritten:
        if self._writer is None and not self.result.files:
            self._open()  # an empty split still gets one (empty) shard so the config loads
        self._close_shard()
        return self.result


class HashingFile(io.RawIOBase):
    """A new file that hashes what is written to it: a parquet writer writes its file once,
    front to back, so the shard's sha256 is known when it closes, without reading it back (a
    second pass over 8 GB in a full MMNeedle publish)."""

    def __init__(self, path: Path):
        self._file = open(path, "xb")  # noqa: SIM115 - closed by close()
        self._sha256 = hashlib.sha256()
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        self._sha256.update(view)
        self._file.write(view)
        self.size += len(view)
        return len(view)

    def tell(self) -> int:
        return self.size

    def close(self) -> None:
        if not self.closed:
            self._file.close()
        super().close()

    def hexdigest(self) -> str:
        return self._sha256.hexdigest()


def shard_options(schema: pa.Schema) -> dict[str, Any]:
    """Parquet writer options for a shard of ``schema``: binary columns (encoded images) get no
    codec, no dictionary and no statistics, every other column zstd as before; pages of a few
    megabytes at most.

    Why: a JPEG does not compress (zstd spent 8.2 s of a 25 s publish for nothing), every value
    is unique (the dictionary is tried, then dropped, in every row group), and min/max of 8 GB
    of image bytes is never read. And the writer checks a page's size only every
    ``write_batch_size`` values (1024 by default), so a row group of large images was one
    page, built in fresh memory its own size (21 MB for 32 8x8 haystacks); every 8 values, a
    page holds at most 8 images (a 0.2-scale MMNeedle publish: 10.3-12.0 s -> 8.3-9.5 s)."""
    binary, other = _columns_by_kind(schema)
    return {
        "compression": {**dict.fromkeys(other, "zstd"), **dict.fromkeys(binary, "none")},
        "use_dictionary": list(other),
        "write_statistics": list(other),
        "write_batch_size": 8,
    }


@functools.lru_cache(maxsize=64)
def _columns_by_kind(schema: pa.Schema) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The parquet column paths of ``schema`` (``image.bytes``, ``cells.list.element.row``):
    the binary ones (byte arrays that are not text), then the others. Read from the schema
    parquet itself writes for it, so nested names are spelled as the writer spells them."""
    buffer = pa.BufferOutputStream()
    pq.write_table(schema.empty_table(), buffer)
    parquet_schema = pq.ParquetFile(pa.BufferReader(buffer.getvalue())).schema
    binary, other = [], []
    for index in range(len(parquet_schema)):
        column = parquet_schema.column(index)
        is_binary = column.physical_type == "BYTE_ARRAY" and column.logical_type.type == "NONE"
        (binary if is_binary else other).append(column.path)
    return tuple(binary), tuple(other)


def write_split(
    root: Path,
    config: str,
    split: str,
    features: datasets.Features,
    batches: Iterable[list[dict] | pa.Table],
    max_shard_bytes: int = DEFAULT_MAX_SHARD_BYTES,
) -> SplitWritten:
    """Write ``batches`` (one row group each, in order) as the split's shards.

    One row group is written (encoded, hashed, written to disk: pyarrow, hashlib and the
    file write all release the GIL) on a thread of its own while this thread builds the next
    (the family's rows, ``from_pylist``: Python), so the two overlap on two cores. The shards
    are the same bytes as written one after the other; at most two row groups are in memory."""
    writer = ShardedWriter(root, config, split, features, max_shard_bytes)
    with ThreadPoolExecutor(1, thread_name_prefix=f"write-{config}") as thread:
        pending: Future[None] | None = None
        try:
            for rows in batches:
                table = writer.table_of(rows)
                if pending is not None:
                    pending.result()
                pending = thread.submit(writer.write_table, table) if table.num_rows else None
        except BaseException:
            if pending is not None:
                pending.exception()  # let the write finish; the error to report is this one
            raise
        if pending is not None:
            pending.result()
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
