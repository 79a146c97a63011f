"""stitched/n{N}.parquet: row groups of ROW_GROUP images, each written through one reused buffer."""

from __future__ import annotations

import hashlib
import random

import pyarrow.parquet as pq

from benchsmith.builders.mmneedle.stitched_writer import (
    ROW_GROUP,
    BytesBatch,
    ScratchBuffer,
    write_stitched,
)
from benchsmith.core.progress import progress_bar


def test_every_row_group_keeps_its_own_bytes_through_the_reused_buffer(tmp_path):
    """Row groups that grow (the buffer is replaced), shrink (its head reused, its old tail
    left unread) and end short: every image reads back as written, in order."""
    rng = random.Random(7)
    sizes = [rng.randrange(50, 200) for _ in range(ROW_GROUP)]  # group 1
    sizes += [rng.randrange(400, 900) for _ in range(ROW_GROUP)]  # larger: a new buffer
    sizes += [rng.randrange(10, 60) for _ in range(ROW_GROUP // 2 + 3)]  # smaller, short
    images = [rng.randbytes(size) for size in sizes]
    digests = [hashlib.sha256(data).hexdigest() for data in images]
    ids = [f"img-{k:04d}" for k in range(len(images))]
    batches = [BytesBatch(images[k : k + 8], digests[k : k + 8]) for k in range(0, len(images), 8)]
    out = tmp_path / "n4.parquet"
    write_stitched(out, ids, batches, progress_bar(total=len(ids), desc="stitching"))

    table = pq.read_table(out)
    assert table.column("stitched_id").to_pylist() == ids
    assert table.column("image").to_pylist() == images
    assert table.column("sha256").to_pylist() == digests
    assert pq.ParquetFile(out).metadata.num_row_groups == 3


def test_a_scratch_buffer_is_reused_until_a_larger_one_is_needed():
    scratch = ScratchBuffer()
    first = scratch.view(1000)
    first[:3] = b"abc"
    assert bytes(scratch.view(10)[:3]) == b"abc"  # the same memory, not a new buffer
    larger = scratch.view(10_000)
    assert len(larger) == 10_000 and bytes(first[:3]) == b"abc"  # the old one stays valid
