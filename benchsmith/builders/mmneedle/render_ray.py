"""The MMNeedle render on a Ray cluster: the same cells, canvases and JPEG bytes as the local run.

Locally, the cell cache is a memory-mapped file every worker process opens. Nodes of a cluster
share no memory, so here the cell cache is Ray's object store: phase 1 decodes and resizes
each source once (:func:`load_cell_rgbx`, as locally) in tasks that return one object per
cell; phase 2 stitches batches of images in tasks that receive the cells they need (Ray hands
a task the objects on its node as read-only arrays, without a copy) and return the JPEG bytes
and digests (:func:`render_stitched_image`, :func:`encode_jpeg`, as locally). The driver writes
the row groups in order. Cell objects are task returns, so a cell lost with a node is
recomputed from its source (Ray's lineage); a task whose worker dies is retried.

Sources must be readable at the same path on every node (a shared filesystem), as for any
Ray job reading files.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchsmith.builders.mmneedle.cell_cache import CellSpec
from benchsmith.builders.mmneedle.jpeg_mosaic import TileSet, cell_tile
from benchsmith.builders.mmneedle.render_pool import render_engines
from benchsmith.builders.mmneedle.stitched_writer import BytesBatch, write_stitched
from benchsmith.builders.mmneedle.stitching import (
    encode_jpeg,
    load_cell_rgbx,
    render_stitched_image,
)
from benchsmith.core.executor import ExecutorConfig, RayExecutor, import_ray
from benchsmith.core.hashing import sha256_bytes
from benchsmith.core.limits import max_pixels, set_max_pixels
from benchsmith.core.progress import progress_bar

FILL_BATCH = 16  # sources per phase-1 task
STITCH_BATCH = 8  # stitched images per phase-2 task (as the local spill batches)


def _fill(paths: list[str], spec: CellSpec, limit: int) -> tuple[Any, ...]:
    """Phase 1: one cell per source (RGBX pixels, or its packed JPEG tile when
    ``spec.tile_quality`` is set), then the sources' sha256 digests (last return)."""
    set_max_pixels(limit)
    cells, digests = [], []
    for path in paths:
        cell, data = load_cell_rgbx(path, spec.cell_size, spec.resample, spec.reducing_gap)
        cell = np.ascontiguousarray(cell)
        if spec.tile_quality is not None:
            cell = cell_tile(cell, spec.tile_quality)
        cells.append(cell)
        digests.append(sha256_bytes(data))
    return (*cells, digests)


def _stitch(
    grid: int, quality: int, tile_side: int, layout: list[tuple[int, ...]], *cells: np.ndarray
) -> tuple[list[bytes], list[str]]:
    """Phase 2: the JPEGs of a batch; ``layout[i]`` indexes ``cells`` for image ``i``. Cells
    are packed JPEG tiles of side ``tile_side`` (written as mosaics) or, if 0, RGBX pixels."""
    images, digests = [], []
    if tile_side:
        tiles = TileSet.from_packed(list(cells), tile_side)  # laid out once for the batch
        for slots in layout:
            data = tiles.mosaic(slots, grid, quality)
            images.append(data)
            digests.append(sha256_bytes(data))
        return images, digests
    side = grid * cells[0].shape[0]
    canvas = np.zeros((side, side, cells[0].shape[2]), dtype=np.uint8)  # reused: fully covered
    for slots in layout:
        image = render_stitched_image([cells[k] for k in slots], grid, canvas)
        data = encode_jpeg(image, quality)
        images.append(data)
        digests.append(sha256_bytes(data))
    return images, digests


class RayCells:
    """The cell of every source, as object references, filled once per render."""

    def __init__(self, executor: RayExecutor, sources: Sequence[Path], spec: CellSpec):
        self.ray = import_ray()
        self.executor = executor
        self.sources = [str(p) for p in sources]
        self.spec = spec
        self.refs: list[Any] = []
        self.digests: list[str] = []

    def fill(self, on_done: Callable[[int], object] | None = None) -> list[str]:
        """Submit every phase-1 task; wait for the digests (the cells stay in the cluster)."""
        remote = self.ray.remote(_fill)
        retries = self.executor.max_retries
        digest_refs = []
        for start in range(0, len(self.sources), FILL_BATCH):
            batch = self.sources[start : start + FILL_BATCH]
            task = remote.options(num_returns=len(batch) + 1, max_retries=retries)
            refs = task.remote(batch, self.spec, max_pixels())
            self.refs.extend(refs[:-1])
            digest_refs.append(refs[-1])
        for ref in digest_refs:
            digests = self.executor.get(ref)
            self.digests.extend(digests)
            if on_done:
                on_done(len(digests))
        return self.digests

    def stitch(
        self, grid: int, quality: int, images: Sequence[Sequence[int]]
    ) -> Iterator[tuple[list[bytes], list[str]]]:
        """Batches of ``STITCH_BATCH`` images (each a list of cell slots, row-major) in order,
        at most ``2 x workers`` batches in flight."""
        remote = self.ray.remote(_stitch).options(max_retries=self.executor.max_retries)
        window = 2 * self.executor.workers
        pending: deque[Any] = deque()
        for start in range(0, len(images), STITCH_BATCH):
            batch = images[start : start + STITCH_BATCH]
            used = sorted({slot for slots in batch for slot in slots})
            local = {slot: k for k, slot in enumerate(used)}
            layout = [tuple(local[s] for s in slots) for slots in batch]
            cells = (self.refs[s] for s in used)
            pending.append(remote.remote(grid, quality, self.spec.tile_side, layout, *cells))
            if len(pending) >= window:
                yield self.executor.get(pending.popleft())
        while pending:
            yield self.executor.get(pending.popleft())


def render_on_ray(
    config: ExecutorConfig,
    sources: Sequence[Path],
    spec: CellSpec,
    quality: int,
    grids: dict[int, tuple[list[str], list[tuple[int, ...]]]],
    out_path_of: Callable[[int], Path],
) -> tuple[dict[str, str], list[str]]:
    """Render ``grids`` (grid -> stitched ids and the cell slots of each image, slots indexing
    ``sources``) into ``out_path_of(grid)``; returns (the resize and JPEG engines the workers used, the
    sha256 of every source)."""
    with RayExecutor(config.workers, config.address, config.max_retries) as executor:
        setting = (spec.resample, spec.reducing_gap, spec.cell_size, quality)
        engines = executor.call(render_engines, setting)
        spec = spec.with_engines(engines, quality)
        cells = RayCells(executor, sources, spec)
        bar = progress_bar(total=len(sources), desc="decoding sources (ray)", unit="img")
        digests = cells.fill(bar.update)
        bar.close()
        for grid, (ids, layouts) in grids.items():
            bar = progress_bar(total=len(ids), desc=f"stitching {grid}x{grid} (ray)", unit="img")
            batches = (BytesBatch(*result) for result in cells.stitch(grid, quality, layouts))
            write_stitched(out_path_of(grid), ids, batches, bar)
            bar.close()
    return engines, digests
