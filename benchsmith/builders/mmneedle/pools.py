"""Stitched-image pools: which COCO images fill the N x N cells of each stitched image.

A pool is an int array of shape ``(pool_size, N*N)`` holding indices into the candidate list,
cells in row-major order (cell k is row k // N, column k % N).

* canonical: candidates sorted by COCO image id; the pool is cut from consecutive seeded
  permutations ("passes") of the candidates, so every image is used about equally often and the
  stitched images of one pass are disjoint, which lets M-image haystacks avoid repeats.
* legacy: replays the original scripts: Python ``random`` seeded once, candidates in the order of
  ``images[]`` in the captions file, one ``random.sample`` per stitched image (one single
  sample of ``pool_size`` images for N = 1).
"""

from __future__ import annotations

import random

import numpy as np

from benchsmith.core.errors import PlanError
from benchsmith.core.rng import derived_rng

FAMILY = "mmneedle"


def stitched_id(grid: int, index: int) -> str:
    return f"n{grid}-{index:05d}"


def _too_few(needed: int, available: int, what: str) -> PlanError:
    return PlanError(
        f"too few COCO images with captions for {what}: need {needed}, have {available}",
        fix="use more source images (coco.sample.n_images) or smaller grids / haystacks",
    )


def canonical_pool(n_candidates: int, grid: int, pool_size: int, seed: int) -> np.ndarray:
    cells = grid * grid
    per_pass = n_candidates // cells
    if per_pass == 0:
        raise _too_few(cells, n_candidates, f"a {grid}x{grid} stitched image")
    pool = np.empty((pool_size, cells), dtype=np.int64)
    n_passes = -(-pool_size // per_pass)
    for p in range(n_passes):
        perm = derived_rng(seed, FAMILY, f"pool_n{grid}", p).permutation(n_candidates)
        start = p * per_pass
        stop = min(pool_size, start + per_pass)
        pool[start:stop] = perm[: (stop - start) * cells].reshape(stop - start, cells)
    return pool


def legacy_pool(n_candidates: int, grid: int, pool_size: int, seed: int) -> np.ndarray:
    cells = grid * grid
    stream = random.Random(seed)
    if grid == 1:
        if pool_size > n_candidates:
            raise _too_few(
                pool_size, n_candidates, f"a legacy 1x1 pool of {pool_size} distinct images"
            )
        return np.asarray(stream.sample(range(n_candidates), pool_size), dtype=np.int64).reshape(
            pool_size, 1
        )
    if cells > n_candidates:
        raise _too_few(cells, n_candidates, f"a {grid}x{grid} stitched image")
    return np.asarray(
        [stream.sample(range(n_candidates), cells) for _ in range(pool_size)], dtype=np.int64
    )


def build_pool(order: str, n_candidates: int, grid: int, pool_size: int, seed: int) -> np.ndarray:
    if order == "legacy":
        return legacy_pool(n_candidates, grid, pool_size, seed)
    return canonical_pool(n_candidates, grid, pool_size, seed)
