"""Worker processes for rendering: started once per render, shared by every phase.

Workers import only this module (numpy, Pillow), never polars/pyarrow/datasets, and the
forkserver preloads it, so a worker starts in milliseconds. Tasks carry the path and shape of
the cell cache; each worker opens the memory map once and keeps it.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchsmith.builders.mmneedle.jpeg_mosaic import (
    MCU,
    cell_tile,
    matches_installed_pillow,
    mosaic_from_slots,
)
from benchsmith.builders.mmneedle.render_workers import RENDER_MODULES
from benchsmith.builders.mmneedle.stitching import (
    encode_jpeg,
    load_cell_rgbx,
    render_stitched_image,
)
from benchsmith.core.executor import LocalExecutor, preload_in_pools
from benchsmith.core.hashing import sha256_bytes
from benchsmith.core.limits import DEFAULT_MAX_PIXELS, set_max_pixels

_maps: dict[tuple[str, str], np.ndarray] = {}


def _cells(cache_path: str, shape: tuple[int, ...], mode: str) -> np.ndarray:
    key = (cache_path, mode)
    if key not in _maps:
        _keep_freed_memory()
        _maps.clear()  # a new phase or a new render: drop maps of older cache files
        # a plain ndarray over the map: indexing a np.memmap makes a memmap per cell (~4 us)
        _maps[key] = np.asarray(np.memmap(cache_path, dtype=np.uint8, mode=mode, shape=shape))
    return _maps[key]


@dataclass(frozen=True)
class FillTask:
    """Decode + resize one source into slot ``index`` of the cache; returns its file sha256.

    With ``tile_quality`` the slot holds the cell as a JPEG tile at that quality (its indexed
    scan, :mod:`benchsmith.builders.mmneedle.jpeg_mosaic`) instead of its RGBX pixels."""

    cache_path: str
    shape: tuple[int, ...]
    index: int
    source: str
    resample: str
    reducing_gap: float | None
    max_pixels: int = DEFAULT_MAX_PIXELS  # the parent's images.max_pixels (workers start fresh)
    cell_size: int = 0  # the cell's side (0: the shape's, for RGBX pixel slots)
    tile_quality: int | None = None


def fill_cell(task: FillTask) -> str:
    set_max_pixels(task.max_pixels)
    side = task.cell_size or task.shape[1]
    cell, data = load_cell_rgbx(task.source, side, task.resample, task.reducing_gap)
    cell = np.ascontiguousarray(cell)
    slot = int(np.prod(task.shape[1:]))
    if task.tile_quality is None:
        payload = memoryview(cell).cast("B")
    else:
        payload = memoryview(cell_tile(cell, task.tile_quality))
    # pwrite, not a store through the memory map: one copy into the page cache, without a
    # page fault per 4 KiB of a file page not yet mapped
    written = os.pwrite(_cache_fd(task.cache_path), payload, task.index * slot)
    if written != len(payload):
        raise OSError(f"short write to the cell cache {task.cache_path} (disk full?)")
    return sha256_bytes(data)


_fds: dict[str, int] = {}


def _cache_fd(cache_path: str) -> int:
    if cache_path not in _fds:
        _keep_freed_memory()
        _close_fds()  # a new render: drop the descriptor of an older cache file
        _fds[cache_path] = os.open(cache_path, os.O_WRONLY)
    return _fds[cache_path]


def _close_fds() -> None:
    for fd in _fds.values():
        os.close(fd)
    _fds.clear()


def tiles_apply(setting: tuple[int, int]) -> bool:
    """Whether stitched images of ``(cell_size, quality)`` can be written as JPEG mosaics in
    this process: cells on whole 16 px MCUs, and mosaics equal to the installed Pillow's
    encode of the canvas (checked once per process)."""
    cell_size, quality = setting
    return cell_size % MCU == 0 and matches_installed_pillow(quality)


MOSAIC_ENGINE = "benchsmith.builders.mmneedle.jpeg_mosaic"


def render_engines(setting: tuple[str, float | None, int, int]) -> dict[str, str]:
    """What resizes cells and what writes stitched JPEGs in this process for ``(resample,
    reducing_gap, cell_size, quality)``; every pair gives Pillow's bytes."""
    resample, reducing_gap, cell_size, quality = setting
    mosaic = tiles_apply((cell_size, quality))
    return {
        "resize": resize_engine((resample, reducing_gap)),
        "jpeg": MOSAIC_ENGINE if mosaic else "pillow",
    }


def resize_engine(setting: tuple[str, float | None]) -> str:
    """What resizes cells for ``(resample, reducing_gap)`` in this process: Pillow's algorithm
    in :mod:`benchsmith.builders.mmneedle.resample` (checked equal to the installed Pillow) or Pillow."""
    from benchsmith.builders.mmneedle.stitching import exact_fast_resize

    return "benchsmith.builders.mmneedle.resample" if exact_fast_resize(*setting) else "pillow"


@dataclass(frozen=True)
class StitchTask:
    """One stitched JPEG of cached cells (row-major): pasted and encoded, or, when the cache
    holds JPEG tiles of side ``tile_side``, written as their mosaic (the same bytes)."""

    cache_path: str
    shape: tuple[int, ...]
    grid: int
    quality: int
    cells: tuple[int, ...]
    tile_side: int = 0


def stitch_image(task: StitchTask) -> bytes:
    """One stitched JPEG from cached cells (row views, no copy) on a reused canvas."""
    cells = _cells(task.cache_path, task.shape, "r")
    if task.tile_side:
        return mosaic_from_slots(cells, task.cells, task.grid, task.tile_side, task.quality)
    canvas = _canvas(task.grid * task.shape[1], task.shape[3])
    image = render_stitched_image([cells[i] for i in task.cells], task.grid, canvas)
    return encode_jpeg(image, task.quality)


def stitch_cells(task: StitchTask) -> tuple[bytes, str]:
    """One stitched JPEG and its sha256."""
    data = stitch_image(task)
    return data, sha256_bytes(data)


def stitch_digest(task: StitchTask) -> str:
    """Only the sha256 of one stitched JPEG (the audit compares digests, not bytes)."""
    return sha256_bytes(stitch_image(task))


@dataclass(frozen=True)
class SpillBatch:
    """Stitch consecutive images into the file ``spill_dir/name``.

    Why: the JPEG bytes (8 GB in a full build) then reach the parent's parquet writer through
    the page cache (one read per batch, wrapped by Arrow without a copy) instead of being
    pickled through a pipe to a parent that competes with the workers for the cores. The
    parent deletes each file as soon as it has read it: a file deleted within seconds of being
    written is dropped from the page cache without ever being written to disk."""

    spill_dir: str
    name: str
    tasks: tuple[StitchTask, ...]


@dataclass(frozen=True)
class Spilled:
    """Where a batch's JPEGs lie: the spill ``file``, their byte ``offsets`` in it (one more
    than images: the end) and their sha256 digests; contiguous, in order."""

    file: str
    offsets: tuple[int, ...]
    digests: tuple[str, ...]


def stitch_to_spill(batch: SpillBatch) -> Spilled:
    offsets, digests = [0], []
    with open(os.path.join(batch.spill_dir, batch.name), "wb") as handle:
        for task in batch.tasks:
            data = stitch_image(task)
            handle.write(data)
            offsets.append(offsets[-1] + len(data))
            digests.append(sha256_bytes(data))
    return Spilled(batch.name, tuple(offsets), tuple(digests))


_canvases: dict[tuple[int, int], np.ndarray] = {}


def _canvas(side: int, channels: int) -> np.ndarray:
    """A zeroed side x side canvas owned by this process (reused: cells cover it fully)."""
    if (side, channels) not in _canvases:
        _canvases.clear()
        _canvases[side, channels] = np.zeros((side, side, channels), dtype=np.uint8)
    return _canvases[side, channels]


_tuned = False


def _keep_freed_memory() -> None:
    """Once per worker process (never in the parent): stop glibc from handing multi-MB buffers (JPEG encoder
    scratch, decode buffers) back to the kernel after every image, which costs a page fault
    per 4 KiB when they are allocated again. Measured: ~360k faults per 500-image render."""
    global _tuned
    if _tuned or multiprocessing.parent_process() is None:
        return
    _tuned = True
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(-1, -1)  # M_TRIM_THRESHOLD: never trim the heap
        libc.mallopt(-3, 1 << 30)  # M_MMAP_THRESHOLD: serve large blocks from the reusable heap
    except (OSError, AttributeError):
        pass  # not glibc: nothing to tune


# the fork server loads these once, whichever pool of the process starts it
preload_in_pools(*RENDER_MODULES)


class RenderPool(LocalExecutor):
    """The local executor for the render: its fork server preloads this module and the
    compiled resize and mosaic kernels (loaded once in the server, inherited by every worker), and leaving
    it drops this process's maps, canvases and descriptors of the cell cache."""

    def __init__(self, workers: int):
        super().__init__(max(1, int(workers)), RENDER_MODULES)

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        _maps.clear()
        _canvases.clear()
        _close_fds()

    def imap(
        self,
        fn: Callable[[Any], Any],
        tasks: Sequence[Any],
        chunksize: int = 8,
        ahead: int | None = None,
    ) -> Iterator[Any]:
        """``map`` on the workers, however few the tasks: running a short list here would save
        a round trip of milliseconds and cost this process loading the kernels (a build of
        a second where none is cached; the workers have them from the fork server)."""
        return self.map(fn, tasks, chunksize=chunksize, ahead=ahead)
