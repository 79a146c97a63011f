"""A build-wide cache of resized cells, so each source image is decoded and resized once.

Over the full MMNeedle pools each COCO image fills about 20 cells; decoding and resizing it
per cell (what the original does) costs more than everything else together. The cache is a
memory-mapped file filled by worker processes; stitching workers then read cells from the page
cache. It lives on disk, so memory stays bounded whatever the number of source images. A slot
holds either the cell's RGBX pixels (``uint8[n, cell, cell, 4]``: the layout Pillow keeps RGB
in, so a pasted canvas is handed to the JPEG encoder without conversion; 256 KiB per 256 px
cell) or, when the stitched images can be written as JPEG mosaics (cells on whole 16 px MCUs),
the cell's JPEG tile (``uint8[n, slot_bytes]``: its indexed scan, tens of KiB used of a
sparse slot), encoded once instead of once per stitched image.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from benchsmith.builders.mmneedle.jpeg_mosaic import slot_bytes
from benchsmith.builders.mmneedle.render_pool import (
    MOSAIC_ENGINE,
    FillTask,
    RenderPool,
    fill_cell,
)
from benchsmith.core.limits import max_pixels


@dataclass(frozen=True)
class CellSpec:
    """How cells are made; with ``tile_quality`` they are cached as JPEG tiles at that quality
    (:mod:`benchsmith.builders.mmneedle.jpeg_mosaic`), so stitching writes mosaics instead of encoding."""

    cell_size: int
    resample: str = "bicubic"
    reducing_gap: float | None = None
    tile_quality: int | None = None

    def with_engines(self, engines: dict[str, str], quality: int) -> CellSpec:
        """This spec caching JPEG tiles when the workers write stitched images as mosaics
        (``engines`` from :func:`render_engines`)."""
        if engines["jpeg"] == MOSAIC_ENGINE:
            return replace(self, tile_quality=quality)
        return self

    @property
    def tile_side(self) -> int:
        """The side of the cached JPEG tiles, 0 when the cache holds RGBX pixels."""
        return self.cell_size if self.tile_quality is not None else 0


def cache_shape(n_sources: int, spec: CellSpec) -> tuple[int, ...]:
    """RGBX pixels ``(n, cell, cell, 4)``, or JPEG tile slots ``(n, slot_bytes)``."""
    if spec.tile_quality is not None:
        return (max(n_sources, 1), slot_bytes(spec.cell_size))
    return (max(n_sources, 1), spec.cell_size, spec.cell_size, 4)


def build_cell_cache(
    paths: Sequence[str | Path],
    cache_path: str | Path,
    spec: CellSpec,
    pool: RenderPool | None = None,
    on_done: Callable[[int], object] | None = None,
) -> tuple[np.memmap, list[str]]:
    """Fill ``cache_path`` with one resized cell per path; returns (memmap, sha256 per path)."""
    shape = cache_shape(len(paths), spec)
    np.memmap(cache_path, dtype=np.uint8, mode="w+", shape=shape).flush()
    limit = max_pixels()
    tasks = [
        FillTask(
            os.fspath(cache_path),
            shape,
            i,
            os.fspath(p),
            spec.resample,
            spec.reducing_gap,
            limit,
            spec.cell_size,
            spec.tile_quality,
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
