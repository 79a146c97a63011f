"""Render workers hand JPEGs to the parquet writer through spill files, not pickles."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
from PIL import Image

from benchsmith.builders.mmneedle.cell_cache import CellSpec, build_cell_cache
from benchsmith.builders.mmneedle.render import SpillRead
from benchsmith.builders.mmneedle.render_pool import (
    SpillBatch,
    Spilled,
    StitchTask,
    stitch_cells,
    stitch_digest,
    stitch_to_spill,
)
from benchsmith.builders.mmneedle.stitched_writer import BytesBatch, row_group_table
from benchsmith.core.errors import BenchsmithError


@pytest.fixture()
def cache(tmp_path):
    rng = np.random.default_rng(0)
    paths = []
    for k in range(6):
        pixels = np.clip(rng.normal(100 + 20 * k, 50, (60, 80, 3)), 0, 255).astype(np.uint8)
        paths.append(tmp_path / f"COCO_val2014_{k:012d}.jpg")
        Image.fromarray(pixels).save(paths[-1], "JPEG", quality=90)
    cells, _ = build_cell_cache(paths, tmp_path / "cells.u8", CellSpec(24))
    return os.fspath(tmp_path / "cells.u8"), cells.shape


def _tasks(cache, count, grid=2):
    path, shape = cache
    order = np.random.default_rng(1).integers(0, shape[0], (count, grid * grid))
    return [StitchTask(path, shape, grid, 75, tuple(int(i) for i in row)) for row in order]


def test_a_worker_writes_a_batch_to_its_file_and_returns_only_offsets(cache, tmp_path):
    spill = tmp_path / "spill"
    spill.mkdir()
    tasks = _tasks(cache, 7)
    spilled = stitch_to_spill(SpillBatch(os.fspath(spill), "batch-0000003.jpegs", tuple(tasks)))
    assert spilled.file == "batch-0000003.jpegs" and spilled.offsets[0] == 0
    assert len(pickle.dumps(spilled)) < 1024  # what crosses the pipe: no image bytes
    data = (spill / spilled.file).read_bytes()
    assert len(data) == spilled.offsets[-1]
    for k, task in enumerate(tasks):
        expected, expected_digest = stitch_cells(task)
        assert data[spilled.offsets[k] : spilled.offsets[k + 1]] == expected
        assert spilled.digests[k] == expected_digest == stitch_digest(task)


def test_the_parent_reads_each_file_once_deletes_it_and_wraps_the_bytes(cache, tmp_path):
    spill = tmp_path / "spill"
    spill.mkdir()
    tasks = _tasks(cache, 5)
    group = [
        stitch_to_spill(SpillBatch(os.fspath(spill), name, tuple(batch)))
        for name, batch in (("batch-1", tasks[1:3]), ("batch-2", tasks[3:]))
    ]
    table = row_group_table([SpillRead(spill, g) for g in group], [f"id{k}" for k in range(5)], 1)
    assert not list(spill.iterdir())  # deleted as soon as read: never written back to disk
    assert table.column("stitched_id").to_pylist() == ["id1", "id2", "id3", "id4"]
    assert table.column("image").to_pylist() == [stitch_cells(t)[0] for t in tasks[1:]]
    assert table.column("sha256").to_pylist() == [*group[0].digests, *group[1].digests]


@pytest.mark.parametrize("written", [b"\xff\xd8" * 10, b"\xff\xd8" * 30])
def test_a_spill_file_not_holding_what_was_reported_is_a_clear_error(tmp_path, written):
    spill = tmp_path / "spill"
    spill.mkdir()
    (spill / "batch-1").write_bytes(written)  # 20 or 60 bytes for a reported 40
    lying = Spilled("batch-1", (0, 10, 40), ("a" * 64, "b" * 64))
    with pytest.raises(BenchsmithError, match="does not hold what its worker reported") as err:
        row_group_table([SpillRead(spill, lying)], ["x", "y"], 0)
    assert "batch-1" in str(err.value) and "disk" in str(err.value)


def test_a_batch_held_in_memory_writes_the_same_rows_as_a_spilled_one(cache, tmp_path):
    """What the Ray executor hands the writer (bytes its tasks returned) against the local
    spill files: the same table."""
    spill = tmp_path / "spill"
    spill.mkdir()
    tasks = _tasks(cache, 6)
    ids = [f"n2-{k:05d}" for k in range(6)]
    spilled = [
        stitch_to_spill(SpillBatch(os.fspath(spill), f"b{k}", tuple(tasks[k * 3 : k * 3 + 3])))
        for k in range(2)
    ]
    from_files = row_group_table([SpillRead(spill, s) for s in spilled], ids, 0)
    in_memory = [
        BytesBatch([stitch_cells(t)[0] for t in tasks[k * 3 : k * 3 + 3]], s.digests)
        for k, s in enumerate(spilled)
    ]
    assert row_group_table(in_memory, ids, 0).equals(from_files)
    assert in_memory[1].offsets == list(spilled[1].offsets)
