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


class ScratchBuffer:
    """A byte buffer reused from one row group to the next, replaced by a larger one when a
    group needs more. Why: a new buffer of 10-42 MB is fresh memory every time, and on a
    virtual machine touching fresh memory costs more than copying the bytes into it."""

    def __init__(self) -> None:
        self._bytes = np.empty(0, dtype=np.uint8)

    def view(self, size: int) -> memoryview:
        """The first ``size`` bytes (their old contents: the caller overwrites them)."""
        if len(self._bytes) < size:  # a quarter more: the next group may be a little larger
            self._bytes = np.empty(size + size // 4, dtype=np.uint8)
        return memoryview(self._bytes[:size])


def write_stitched(
    out_path: Path, ids: Sequence[str], batches: Iterable[StitchedBatch], progress: Any
) -> None:
    """Write ``batches`` (in order, covering ``ids``) as row groups of ``ROW_GROUP`` rows.

    Batch sizes must divide ``ROW_GROUP`` (the last batch may be short)."""
    with (
        atomic_path(out_path) as tmp,
        # JPEG bytes do not compress, and every value is unique: no codec, no dictionary, no
        # min/max statistics (each would scan the 8 GB of a full build once more). Pages of
        # about a megabyte: the writer checks a page's size every ``write_batch_size`` values
        # (1024 by default), so a row group of 64 images was one page, built in a buffer of
        # its own size (10-42 MB) in fresh memory every time: 0.3 s of page faults for the
        # 65 MB of a 100-image 8x8 render
        pq.ParquetWriter(
            tmp,
            STITCHED_SCHEMA,
            compression="none",
            use_dictionary=False,
            write_statistics=False,
            write_batch_size=1,
        ) as writer,
    ):
        group: list[StitchedBatch] = []
        start = 0
        scratch = ScratchBuffer()  # one row group's image bytes, reused
        for batch in batches:
            group.append(batch)
            count = sum(len(b.digests) for b in group)
            if count == ROW_GROUP or start + count == len(ids):
                table = row_group_table(group, ids, start, scratch)
                writer.write_table(table)
                del table  # nothing refers to scratch's bytes: the next group may reuse them
                start += count
                progress.update(count)
                group = []
    if start != len(ids):
        raise RuntimeError(f"{out_path}: {start} images written for {len(ids)} ids")


def row_group_table(
    group: Sequence[StitchedBatch],
    ids: Sequence[str],
    start: int,
    scratch: ScratchBuffer | None = None,
) -> pa.Table:
    """The rows of one row group; its batches' bytes copied once into one buffer, taken from
    ``scratch`` when given (the table then refers to it: write it before the next call)."""
    offsets, starts, base = [0], [], 0
    for batch in group:
        starts.append(base)
        batch_offsets = batch.offsets
        offsets.extend(base + o for o in batch_offsets[1:])
        base += batch_offsets[-1]
    view = (scratch or ScratchBuffer()).view(base)
    for batch, low in zip(group, starts, strict=True):
        batch.read_into(view[low : low + batch.offsets[-1]])
    count = len(offsets) - 1
    images = pa.Array.from_buffers(
        pa.binary(),
        count,
        [None, pa.py_buffer(np.asarray(offsets, dtype=np.int32)), pa.py_buffer(view)],
    )
    return pa.table(
        {
            "stitched_id": string_array(list(ids[start : start + count])),
            "image": images,
            "sha256": string_array([d for batch in group for d in batch.digests]),
        },
        schema=STITCHED_SCHEMA,
    )
