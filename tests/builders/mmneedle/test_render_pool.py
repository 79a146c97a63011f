"""Render workers hand JPEGs to the parquet writer through spill files, not pickles."""

from __future__ import annotations

import os
import pickle

import numpy as np
import pytest
from PIL import Image

from benchsmith.builders.mmneedle.cell_cache import CellSpec, build_cell_cache
from benchsmith.builders.mmneedle.render import _spilled_table
from benchsmith.builders.mmneedle.render_pool import (
    SpillBatch,
    Spilled,
    StitchTask,
    close_spills,
    stitch_cells,
    stitch_digest,
    stitch_to_spill,
)
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
    yield os.fspath(tmp_path / "cells.u8"), cells.shape
    close_spills()


def _tasks(cache, count, grid=2):
    path, shape = cache
    order = np.random.default_rng(1).integers(0, shape[0], (count, grid * grid))
    return [StitchTask(path, shape, grid, 75, tuple(int(i) for i in row)) for row in order]


def test_a_worker_writes_batches_contiguously_and_returns_only_offsets(cache, tmp_path):
    spill = tmp_path / "spill"
    spill.mkdir()
    tasks = _tasks(cache, 7)
    first = stitch_to_spill(SpillBatch(os.fspath(spill), tuple(tasks[:4])))
    second = stitch_to_spill(SpillBatch(os.fspath(spill), tuple(tasks[4:])))
    assert first.file == second.file == f"worker-{os.getpid()}.jpegs"
    assert first.offsets[0] == 0 and second.offsets[0] == first.offsets[-1]  # one after another
    assert len(pickle.dumps(second)) < 1024  # what crosses the pipe: no image bytes
    data = (spill / first.file).read_bytes()
    spans = [(o[k], o[k + 1]) for o in (first.offsets, second.offsets) for k in range(len(o) - 1)]
    for task, (start, end), digest in zip(
        tasks, spans, first.digests + second.digests, strict=True
    ):
        expected, expected_digest = stitch_cells(task)
        assert data[start:end] == expected and digest == expected_digest == stitch_digest(task)


def test_the_parent_table_wraps_the_spilled_bytes(cache, tmp_path):
    spill = tmp_path / "spill"
    spill.mkdir()
    tasks = _tasks(cache, 5)
    stitch_to_spill(SpillBatch(os.fspath(spill), (tasks[0],)))  # an earlier batch
    group = [
        stitch_to_spill(SpillBatch(os.fspath(spill), tuple(tasks[1:3]))),
        stitch_to_spill(SpillBatch(os.fspath(spill), tuple(tasks[3:]))),
    ]
    fd = os.open(spill / group[0].file, os.O_RDONLY)
    try:
        table = _spilled_table(group, {group[0].file: fd}, spill, [f"id{k}" for k in range(5)], 1)
    finally:
        os.close(fd)
    assert table.column("stitched_id").to_pylist() == ["id1", "id2", "id3", "id4"]
    assert table.column("image").to_pylist() == [stitch_cells(t)[0] for t in tasks[1:]]
    assert table.column("sha256").to_pylist() == [*group[0].digests, *group[1].digests]


def test_a_spill_file_shorter_than_reported_is_a_clear_error(tmp_path):
    spill = tmp_path / "spill"
    spill.mkdir()
    (spill / "worker-1.jpegs").write_bytes(b"\xff\xd8" * 10)
    lying = Spilled("worker-1.jpegs", (0, 10, 40), ("a" * 64, "b" * 64))
    fd = os.open(spill / "worker-1.jpegs", os.O_RDONLY)
    try:
        with pytest.raises(BenchsmithError, match="shorter than its worker reported") as err:
            _spilled_table([lying], {lying.file: fd}, spill, ["x", "y"], 0)
    finally:
        os.close(fd)
    assert "worker-1.jpegs" in str(err.value) and "disk" in str(err.value)
