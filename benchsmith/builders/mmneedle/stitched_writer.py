"""Writing ``stitched/n{N}.parquet``: batches of rendered JPEGs in, row groups of 64 out.

Both executors hand over the same kind of batch (a few consecutive images: their byte offsets,
digests, and a way to copy their bytes into place), so the file they write is the same byte for
byte: the local executor's batches are spill files its workers wrote, Ray's are bytes its tasks
returned. Each row group's image bytes are copied once, into one buffer that becomes the data
buffer of the image column.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from benchsmith.builders.mmneedle.arrow_columns import string_array
from benchsmith.core.atomic import atomic_path

STITCHED_SCHEMA = pa.schema(
    [("stitched_id", pa.string()), ("image", pa.binary()), ("sha256", pa.string())]
)
ROW_GROUP = 64


class StitchedBatch(Protocol):
    """Consecutive images: ``offsets`` from 0 (one more than images: the end), ``digests``."""

    offsets: Sequence[int]
    digests: Sequence[str]

    def read_into(self, view: memoryview) -> None: ...


@dataclass(frozen=True)
class BytesBatch:
    """A batch held in memory (what a Ray task returns)."""

    images: Sequence[bytes]
    digests: Sequence[str]

    @property
    def offsets(self) -> list[int]:
        return [0, *np.cumsum([len(data) for data in self.images]).tolist()]

    def read_into(self, view: memoryview) -> None:
        at = 0
        for data in self.images:
            view[at : at + len(data)] = data
            at += len(data)


def write_stitched(
    out_path: Path, ids: Sequence[str], batches: Iterable[StitchedBatch], progress: Any
) -> None:
    """Write ``batches`` (in order, covering ``ids``) as row groups of ``ROW_GROUP`` rows.

    Batch sizes must divide ``ROW_GROUP`` (the last batch may be short)."""
    with (
        atomic_path(out_path) as tmp,
        # JPEG bytes do not compress, and every value is unique: no codec, no dictionary, no
        # min/max statistics (each would scan the 8 GB of a full build once more)
        pq.ParquetWriter(
            tmp, STITCHED_SCHEMA, compression="none", use_dictionary=False, write_statistics=False
        ) as writer,
    ):
        group: list[StitchedBatch] = []
        start = 0
        for batch in batches:
            group.append(batch)
            count = sum(len(b.digests) for b in group)
            if count == ROW_GROUP or start + count == len(ids):
                writer.write_table(row_group_table(group, ids, start))
                start += count
                progress.update(count)
                group = []
    if start != len(ids):
        raise RuntimeError(f"{out_path}: {start} images written for {len(ids)} ids")


def row_group_table(group: Sequence[StitchedBatch], ids: Sequence[str], start: int) -> pa.Table:
    """The rows of one row group; its batches' bytes copied once into one buffer."""
    offsets, starts, base = [0], [], 0
    for batch in group:
        starts.append(base)
        batch_offsets = batch.offsets
        offsets.extend(base + o for o in batch_offsets[1:])
        base += batch_offsets[-1]
    data = bytearray(base)
    view = memoryview(data)
    for batch, low in zip(group, starts, strict=True):
        batch.read_into(view[low : low + batch.offsets[-1]])
    count = len(offsets) - 1
    images = pa.Array.from_buffers(
        pa.binary(),
        count,
        [None, pa.py_buffer(np.asarray(offsets, dtype=np.int32)), pa.py_buffer(data)],
    )
    return pa.table(
        {
            "stitched_id": string_array(list(ids[start : start + count])),
            "image": images,
            "sha256": string_array([d for batch in group for d in batch.digests]),
        },
        schema=STITCHED_SCHEMA,
    )
