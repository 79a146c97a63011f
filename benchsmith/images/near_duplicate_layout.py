"""How the multi-index near-duplicate search splits 64-bit hashes into chunks and keys.

A layout cuts the 64 bits into ``threshold + k`` contiguous chunks; every ``k``-subset of the
chunks is a *key*, and hashes agreeing on a key's bits share a bucket (see
:mod:`benchsmith.images.near_duplicates` for why that finds every pair within ``threshold``).
This module holds the layout, the cost model that picks ``k`` (:func:`plan_layout`), and the
per-key helpers the search uses: the key's bits of each hash (:func:`key_values`) and one sort
that buckets them (:func:`sort_by_key`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

HASH_BITS = 64
_MAX_KEY_CHUNKS = 4
# Relative costs for plan_layout, measured with numpy 2 on x86: sorting costs ~15 ns per hash
# per key, producing + verifying a candidate ~8 ns.
_SORT_COST = 15.0
_CANDIDATE_COST = 8.0


@dataclass(frozen=True)
class ChunkLayout:
    """How the 64 bits are split: ``chunks`` bit masks, keys made of ``chunks_per_key`` of them."""

    threshold: int
    chunks_per_key: int
    chunk_masks: tuple[int, ...]

    @property
    def n_keys(self) -> int:
        return math.comb(len(self.chunk_masks), self.chunks_per_key)


def check_threshold(threshold: int) -> int:
    """A distance of 0..63: 63 already means 64 one-bit chunks; 64 would match every pair."""
    if isinstance(threshold, bool) or not isinstance(threshold, int | np.integer):
        raise ValueError(f"threshold must be an integer, got {threshold!r}")
    if not 0 <= threshold < HASH_BITS:
        raise ValueError(f"threshold must be between 0 and {HASH_BITS - 1}, got {threshold}")
    return int(threshold)


@lru_cache(maxsize=256)
def make_layout(threshold: int, chunks_per_key: int) -> ChunkLayout:
    """``threshold + chunks_per_key`` contiguous chunks from the low bit up, sizes differing <= 1."""
    n_chunks = threshold + chunks_per_key
    if chunks_per_key < 1 or n_chunks > HASH_BITS:
        raise ValueError(
            f"chunks_per_key must be between 1 and {HASH_BITS - threshold} for threshold "
            f"{threshold}, got {chunks_per_key}"
        )
    base, extra = divmod(HASH_BITS, n_chunks)
    masks, low = [], 0
    for index in range(n_chunks):
        width = base + (1 if index < extra else 0)
        masks.append(((1 << width) - 1) << low)
        low += width
    return ChunkLayout(threshold, chunks_per_key, tuple(masks))


def plan_layout(n_left: int, n_right: int | None, threshold: int) -> ChunkLayout:
    """The ``chunks_per_key`` with the lowest modelled cost for these sizes (uniform hashes).

    Cost per key: sorting every hash, plus the expected candidates (pairs agreeing on the key's
    ``64 * k / m`` bits by chance). ``n_right=None`` means a self-join (pairs counted once).
    """
    threshold = check_threshold(threshold)
    total = n_left + (n_right or 0)
    pairs = n_left * (n_left - 1) / 2 if n_right is None else n_left * n_right
    best: tuple[float, int] | None = None
    for k in range(1, min(_MAX_KEY_CHUNKS, HASH_BITS - threshold) + 1):
        n_keys = math.comb(threshold + k, k)
        key_bits = HASH_BITS * k / (threshold + k)
        cost = n_keys * (_SORT_COST * total + _CANDIDATE_COST * pairs / 2.0**key_bits)
        if best is None or cost < best[0]:
            best = (cost, k)
    assert best is not None
    return make_layout(threshold, best[1])


@dataclass(frozen=True)
class BucketKey:
    """One k-subset of chunks: its (low bit, width) pieces, total width, and the masks of the
    unused chunks below its last chunk (a pair agreeing on one of those is reported earlier)."""

    pieces: tuple[tuple[int, int], ...]
    bits: int
    earlier: tuple[np.uint64, ...]


def layout_keys(layout: ChunkLayout) -> list[BucketKey]:
    """The layout's keys in lexicographic order of chunk subsets."""
    chunks = layout.chunk_masks
    out = []
    for subset in itertools.combinations(range(len(chunks)), layout.chunks_per_key):
        pieces = tuple(_low_width(chunks[index]) for index in subset)
        earlier = tuple(np.uint64(chunks[q]) for q in range(subset[-1]) if q not in subset)
        out.append(BucketKey(pieces, sum(width for _, width in pieces), earlier))
    return out


def _low_width(mask: int) -> tuple[int, int]:
    low = (mask & -mask).bit_length() - 1
    return low, (mask >> low).bit_length()


def key_values(values: np.ndarray, key: BucketKey) -> np.ndarray:
    """The key's bits of each value, packed into the low ``key.bits`` bits."""
    out = np.zeros(values.shape, dtype=np.uint64)
    shift = 0
    for low, width in key.pieces:
        piece = (values >> np.uint64(low)) & np.uint64((1 << width) - 1)
        out |= piece << np.uint64(shift) if shift else piece
        shift += width
    return out


def sort_by_key(keys: np.ndarray, key_bits: int) -> tuple[np.ndarray, np.ndarray]:
    """(order, keys[order]). When key and position fit in 64 bits together, one plain sort of
    ``key << position_bits | position`` (about twice as fast as argsort in NumPy 2)."""
    position_bits = max(int(keys.size - 1).bit_length(), 1)
    if key_bits + position_bits > HASH_BITS:
        order = np.argsort(keys)
        return order, keys[order]
    packed = np.sort((keys << np.uint64(position_bits)) | np.arange(keys.size, dtype=np.uint64))
    order = (packed & np.uint64((1 << position_bits) - 1)).astype(np.int64)
    return order, packed >> np.uint64(position_bits)
