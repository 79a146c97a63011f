"""A build-wide cache of resized cells, so each source image is decoded and resized once.

Over the full MMNeedle pools each COCO image fills about 20 cells; decoding and resizing it
per cell (what the original does) costs more than everything else together. The cache is a
memory-mapped ``uint8[n, cell, cell, 4]`` file (RGBX: the layout Pillow keeps RGB in, so a
pasted canvas is handed to the JPEG encoder without conversion) filled by worker processes;
stitching workers then read cells from the page cache. It lives on disk, so memory stays
bounded whatever the number of source images (4 bytes x 256 x 256 = 256 KiB per source).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchsmith.builders.mmneedle.render_pool import FillTask, RenderPool, fill_cell
from benchsmith.core.limits import max_pixels


@dataclass(frozen=True)
class CellSpec:
    cell_size: int
    resample: str = "bicubic"
    reducing_gap: float | None = None


def cache_shape(n_sources: int, cell_size: int) -> tuple[int, int, int, int]:
    return (max(n_sources, 1), cell_size, cell_size, 4)


def build_cell_cache(
    paths: Sequence[str | Path],
    cache_path: str | Path,
    spec: CellSpec,
    pool: RenderPool | None = None,
    on_done: Callable[[int], object] | None = None,
) -> tuple[np.memmap, list[str]]:
    """Fill ``cache_path`` with one resized cell per path; returns (memmap, sha256 per path)."""
    shape = cache_shape(len(paths), spec.cell_size)
    np.memmap(cache_path, dtype=np.uint8, mode="w+", shape=shape).flush()
    limit = max_pixels()
    tasks = [
        FillTask(
            os.fspath(cache_path), shape, i, os.fspath(p), spec.resample, spec.reducing_gap, limit
        )
        for i, p in enumerate(paths)
    ]
    hashes = []
    for digest in (pool or RenderPool(1)).imap(
        fill_cell, tasks, chunksize=16
    ):  # pool: entered by the caller
        hashes.append(digest)
        if on_done:
            on_done(1)
    return np.memmap(cache_path, dtype=np.uint8, mode="r", shape=shape), hashes
