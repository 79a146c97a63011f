"""Worker processes for rendering: started once per render, shared by every phase.

Workers import only this module (numpy, Pillow), never polars/pyarrow/datasets, and the
forkserver preloads it, so a worker starts in milliseconds. Tasks carry the path and shape of
the cell cache; each worker opens the memory map once and keeps it.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchsmith.core.hashing import sha256_bytes
from benchsmith.stages.stitching import encode_jpeg, load_cell, render_stitched_image

_maps: dict[tuple[str, str], np.memmap] = {}


def _cells(cache_path: str, shape: tuple[int, ...], mode: str) -> np.memmap:
    key = (cache_path, mode)
    if key not in _maps:
        _maps.clear()  # a new phase or a new render: drop maps of older cache files
        _maps[key] = np.memmap(cache_path, dtype=np.uint8, mode=mode, shape=shape)
    return _maps[key]


@dataclass(frozen=True)
class FillTask:
    """Decode + resize one source into slot ``index`` of the cache; returns its file sha256."""

    cache_path: str
    shape: tuple[int, ...]
    index: int
    source: str
    resample: str
    reducing_gap: float | None


def fill_cell(task: FillTask) -> str:
    cell, data = load_cell(task.source, task.shape[1], task.resample, task.reducing_gap)
    _cells(task.cache_path, task.shape, "r+")[task.index] = cell
    return sha256_bytes(data)


@dataclass(frozen=True)
class StitchTask:
    """Paste cached cells (row-major) and encode one stitched JPEG."""

    cache_path: str
    shape: tuple[int, ...]
    grid: int
    quality: int
    cells: tuple[int, ...]


def stitch_cells(task: StitchTask) -> bytes:
    cells = _cells(task.cache_path, task.shape, "r")[list(task.cells)]
    return encode_jpeg(render_stitched_image(cells, task.grid), task.quality)


def _context() -> multiprocessing.context.BaseContext:
    """forkserver: safe with the threads polars/pyarrow start in the parent; preloads this module."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return context


class RenderPool:
    """``imap`` over tasks, in ``workers`` processes (or in-process for one worker)."""

    def __init__(self, workers: int):
        self.workers = max(1, int(workers))
        self._pool: Any = None

    def __enter__(self) -> RenderPool:
        if self.workers > 1:
            self._pool = _context().Pool(self.workers)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.terminate() if exc[0] else self._pool.close()
            self._pool.join()
        _maps.clear()

    def imap(
        self, fn: Callable[[Any], Any], tasks: Sequence[Any], chunksize: int = 8
    ) -> Iterator[Any]:
        if self._pool is None or len(tasks) <= chunksize:
            return map(fn, tasks)
        return self._pool.imap(fn, tasks, chunksize=chunksize)


def cpu_count() -> int:
    return (
        len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    )
