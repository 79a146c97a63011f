"""A build-wide cache of resized cells, so each source image is decoded and resized once.

Over the full MMNeedle pools each COCO image fills about 20 cells; decoding and resizing it
per cell (what the original does) costs more than everything else together. The cache is a
memory-mapped ``uint8[n, cell, cell, 3]`` file filled by worker processes; stitching workers
then read cells from the page cache. It lives on disk, so memory stays bounded whatever the
number of source images.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchsmith.core.hashing import sha256_bytes
from benchsmith.stages.stitching import load_cell


@dataclass(frozen=True)
class CellSpec:
    cell_size: int
    resample: str = "bicubic"
    reducing_gap: float | None = None


_worker: dict = {}


def _init_fill(cache_path: str, shape: tuple[int, ...], spec: CellSpec) -> None:
    _worker["cells"] = np.memmap(cache_path, dtype=np.uint8, mode="r+", shape=shape)
    _worker["spec"] = spec


def _fill_one(task: tuple[int, str]) -> tuple[int, str]:
    index, path = task
    spec: CellSpec = _worker["spec"]
    cell, data = load_cell(path, spec.cell_size, spec.resample, spec.reducing_gap)
    _worker["cells"][index] = cell
    return index, sha256_bytes(data)


def pool_context() -> multiprocessing.context.BaseContext:
    """forkserver: safe with the threads polars and pyarrow start in the parent."""
    return multiprocessing.get_context("forkserver")


def map_tasks(
    fn, tasks: Sequence, workers: int, initializer, initargs: tuple, chunksize: int = 8
) -> Iterator:
    """Ordered map over tasks, in-process for one worker (no start-up cost for small jobs)."""
    if workers <= 1 or len(tasks) <= chunksize:
        initializer(*initargs)
        yield from map(fn, tasks)
        return
    with pool_context().Pool(workers, initializer=initializer, initargs=initargs) as pool:
        yield from pool.imap(fn, tasks, chunksize=chunksize)


def build_cell_cache(
    paths: Sequence[str | Path],
    cache_path: str | Path,
    spec: CellSpec,
    workers: int = 1,
    on_done=None,
) -> tuple[np.memmap, list[str]]:
    """Fill ``cache_path`` with one resized cell per path; returns (memmap, sha256 per path)."""
    shape = (max(len(paths), 1), spec.cell_size, spec.cell_size, 3)
    cells = np.memmap(cache_path, dtype=np.uint8, mode="w+", shape=shape)
    cells.flush()
    hashes = [""] * len(paths)
    tasks = [(i, os.fspath(p)) for i, p in enumerate(paths)]
    for index, digest in map_tasks(
        _fill_one, tasks, workers, _init_fill, (os.fspath(cache_path), shape, spec), chunksize=16
    ):
        hashes[index] = digest
        if on_done:
            on_done(1)
    _worker.clear()
    return np.memmap(cache_path, dtype=np.uint8, mode="r", shape=shape), hashes
