"""How the multi-index near-duplicate search splits 64-bit hashes into chunks and keys.

A layout cuts the 64 bits into ``threshold + k`` contiguous chunks; every ``k``-subset of the
chunks is a *key*, and hashes agreeing on a key's bits share a bucket (see
:mod:`benchsmith.images.near_duplicates` for why that finds every pair within ``threshold``).
This module holds the layout, the cost model that picks ``k`` (:func:`plan_layout`, also used
by ``bench/near_dup_search.py`` to predict the time), and the keys in the form the compiled
kernels take (:class:`BucketKey`, and :class:`PrefixGroup` for the keys that share all but
their last chunk).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

HASH_BITS = 64
_MAX_KEY_CHUNKS = 5
DIGIT_BITS = 11  # 2,048 radix counters per pass: they stay in L1 while 10M values stream past
SORT_BITS_MAX = 33  # keys longer than this are sorted by their first 33 bits (3 passes)
# Costs in ns for plan_layout, measured on a 2-core x86 VM (AMD EPYC, numba 0.68) with
# bench/near_dup_search.py: per hash and key, the permutation and the pairing scan, and each
# radix pass; per candidate (a pair sharing the sorted bits by chance); per key, the Python
# around the kernels. Two threads run 1.8x one, not 2x (they share the memory bus). The
# candidate cost was re-measured on 2026-11-29 (a 2-core Xeon VM with AVX-512) once the scan
# counted a value's hits in a vectorised loop first: 10M hashes 42.1 s -> 26.5 s, 0.4 ns a
# candidate instead of 1.0 (on a CPU without vector popcounts the gain is smaller).
PERMUTE_SCAN_NS = 4.0
RADIX_PASS_NS = 5.0
# a key of a prefix group (shares_prefixes): its bucket split by the last chunk in cache, per
# hash (measured on the 2-core Xeon VM, 2026-11-29: 25 ms a key at 10M)
SPLIT_NS = 2.5
CANDIDATE_NS = 0.4
KEY_OVERHEAD_NS = 50_000.0
PARALLEL_EFFICIENCY = 0.9


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


def modelled_seconds(
    layout: ChunkLayout, n_left: int, n_right: int | None, workers: int = 1
) -> float:
    """Time the search is expected to take for uniform hashes (the keys split over workers).

    Per key: the permutation, radix passes and pairing scan over every hash, and the
    candidates (pairs of hashes that share the grouped bits by chance: ``pairs / 2**bits``).
    """
    total = n_left + (n_right or 0)
    pairs = n_left * (n_left - 1) / 2 if n_right is None else n_left * n_right
    total_ns = 0.0
    if n_right is None and shares_prefixes(layout):  # a self-join sorts once per prefix
        for group in layout_prefix_groups(layout):
            total_ns += (
                KEY_OVERHEAD_NS
                + (PERMUTE_SCAN_NS / 2 + RADIX_PASS_NS * prefix_sort_passes(group.bits)[0]) * total
            )
            for bits in (group.bits + group.chunk_bits).tolist():
                total_ns += (
                    PERMUTE_SCAN_NS / 2 + SPLIT_NS
                ) * total + CANDIDATE_NS * pairs / 2.0**bits
        threads = max(1, min(workers, layout.n_keys))
        return total_ns / 1e9 / (1.0 if threads == 1 else threads * PARALLEL_EFFICIENCY)
    for key in layout_keys(layout):
        bits = group_bits_for(key)
        total_ns += (
            KEY_OVERHEAD_NS
            + (PERMUTE_SCAN_NS + RADIX_PASS_NS * radix_passes(sort_bits_for(key))) * total
            + CANDIDATE_NS * pairs / 2.0**bits
        )
    threads = max(1, min(workers, layout.n_keys))
    speedup = 1.0 if threads == 1 else threads * PARALLEL_EFFICIENCY
    return total_ns / 1e9 / speedup


def plan_layout(
    n_left: int, n_right: int | None, threshold: int, *, workers: int = 1
) -> ChunkLayout:
    """The ``chunks_per_key`` with the lowest modelled time for these sizes (uniform hashes).

    ``n_right=None`` means a self-join (pairs counted once).
    """
    threshold = check_threshold(threshold)
    best: tuple[float, int] | None = None
    for k in range(1, min(_MAX_KEY_CHUNKS, HASH_BITS - threshold) + 1):
        cost = modelled_seconds(make_layout(threshold, k), n_left, n_right, workers)
        if best is None or cost < best[0]:
            best = (cost, k)
    assert best is not None
    return make_layout(threshold, best[1])


@dataclass(frozen=True)
class BucketKey:
    """One k-subset of chunks in the form the kernels take.

    ``lows``/``widths``: the pieces of a bit permutation that puts the key's chunks on top
    (adjacent chunks merged), then the other chunks; ``bits``: the key's width; ``earlier``:
    the masks, in permuted positions, of the unused chunks below the key's last chunk (a pair
    agreeing on one of those is reported under an earlier key).
    """

    lows: tuple[int, ...]
    widths: tuple[int, ...]
    bits: int
    earlier: np.ndarray  # uint64


def _merged_pieces(masks: list[int]) -> list[tuple[int, int]]:
    """(low, width) of each run of adjacent chunks, in order."""
    pieces: list[tuple[int, int]] = []
    for mask in masks:
        low, width = _low_width(mask)
        if pieces and pieces[-1][0] + pieces[-1][1] == low:
            pieces[-1] = (pieces[-1][0], pieces[-1][1] + width)
        else:
            pieces.append((low, width))
    return pieces


def permute_int(value: int, lows: tuple[int, ...], widths: tuple[int, ...]) -> int:
    """The kernels' bit permutation for one Python int (for masks and tests)."""
    out, shift = 0, HASH_BITS
    for low, width in zip(lows, widths, strict=True):
        shift -= width
        out |= ((value >> low) & ((1 << width) - 1)) << shift
    return out


def sort_bits_for(key: BucketKey) -> int:
    """Key bits the radix sort orders by; longer keys are compared in full in the scan."""
    return min(key.bits, SORT_BITS_MAX)


def group_bits_for(key: BucketKey) -> int:
    """Top bits that are equal within a scanned group: the sorted bits, but never past the
    key (a pass may sort a few bits more than asked, which would split a key's bucket)."""
    bits = sort_bits_for(key)
    return min(key.bits, radix_passes(bits) * radix_digit_bits(bits))


def radix_passes(sort_bits: int) -> int:
    """Passes of at most ``DIGIT_BITS`` bits that sort ``sort_bits`` bits."""
    return max(1, -(-sort_bits // DIGIT_BITS))


def radix_digit_bits(sort_bits: int) -> int:
    """Bits per pass: the sorted bits spread evenly over the passes."""
    return max(1, -(-sort_bits // radix_passes(sort_bits)))


@lru_cache(maxsize=64)
def _layout_keys(layout: ChunkLayout) -> tuple[BucketKey, ...]:
    chunks = layout.chunk_masks
    out = []
    for subset in itertools.combinations(range(len(chunks)), layout.chunks_per_key):
        rest = [index for index in range(len(chunks)) if index not in subset]
        pieces = _merged_pieces([chunks[i] for i in subset]) + _merged_pieces(
            [chunks[i] for i in rest]
        )
        lows = tuple(low for low, _ in pieces)
        widths = tuple(width for _, width in pieces)
        earlier = [permute_int(chunks[q], lows, widths) for q in rest if q < subset[-1]]
        out.append(
            BucketKey(
                lows=lows,
                widths=widths,
                bits=sum(_low_width(chunks[i])[1] for i in subset),
                earlier=np.array(earlier, dtype=np.uint64),
            )
        )
    return tuple(out)


def layout_keys(layout: ChunkLayout) -> list[BucketKey]:
    """The layout's keys in lexicographic order of chunk subsets."""
    return list(_layout_keys(layout))


# --- keys that share all but their last chunk ------------------------------------------------

# a shared prefix is sorted in passes of up to 12 bits (4,096 counters, 32 KiB: one pass
# instead of two for the 12-bit prefixes of threshold 8, 78 ms instead of 111 at 10M), two at most
PREFIX_DIGIT_BITS = 12
PREFIX_SORT_BITS_MAX = 2 * PREFIX_DIGIT_BITS
LAST_CHUNK_BITS_MAX = 8  # a bucket is split by the last chunk with 256 counters in L1


@dataclass(frozen=True)
class PrefixGroup:
    """The keys that share their first ``k - 1`` chunks (the *prefix*), in the form the kernels
    take: one permutation that puts the prefix on top (``lows``/``widths``, ``bits`` its
    width), then, per key, where its last chunk sits in the permuted value (``shifts``,
    ``chunk_bits``) and its ``earlier`` masks (row ``t``, the first ``earlier_counts[t]``)."""

    lows: tuple[int, ...]
    widths: tuple[int, ...]
    bits: int
    shifts: np.ndarray  # int64, one per key
    chunk_bits: np.ndarray  # int64, one per key
    earlier: np.ndarray  # uint64, keys x max earlier
    earlier_counts: np.ndarray  # int64, one per key

    @property
    def n_keys(self) -> int:
        return int(self.shifts.size)


def shares_prefixes(layout: ChunkLayout) -> bool:
    """Whether the search sorts once per prefix and splits buckets by the last chunk in cache
    (:func:`layout_prefix_groups`) instead of sorting once per key: keys of two chunks or more,
    prefixes short enough to sort in two passes, last chunks narrow enough for L1 counters."""
    if layout.chunks_per_key < 2:
        return False
    widths = sorted((_low_width(mask)[1] for mask in layout.chunk_masks), reverse=True)
    prefix = sum(widths[: layout.chunks_per_key - 1])
    return prefix <= PREFIX_SORT_BITS_MAX and widths[0] <= LAST_CHUNK_BITS_MAX


def prefix_sort_passes(bits: int) -> tuple[int, int]:
    """(passes, bits per pass) that sort a prefix of ``bits`` bits."""
    passes = max(1, -(-bits // PREFIX_DIGIT_BITS))
    return passes, max(1, -(-bits // passes))


@lru_cache(maxsize=64)
def _layout_prefix_groups(layout: ChunkLayout) -> tuple[PrefixGroup, ...]:
    chunks = layout.chunk_masks
    groups = []
    for prefix in itertools.combinations(range(len(chunks)), layout.chunks_per_key - 1):
        lasts = list(range(prefix[-1] + 1, len(chunks)))
        if not lasts:
            continue
        rest = [index for index in range(len(chunks)) if index not in prefix]
        pieces = _merged_pieces([chunks[i] for i in prefix]) + _merged_pieces(
            [chunks[i] for i in rest]
        )
        lows = tuple(low for low, _ in pieces)
        widths = tuple(width for _, width in pieces)
        places = [_low_width(permute_int(chunks[c], lows, widths)) for c in lasts]
        # a key (prefix + c) drops a pair that also agrees on an unused chunk below c
        earlier = [[permute_int(chunks[q], lows, widths) for q in rest if q < c] for c in lasts]
        table = np.zeros((len(lasts), max(1, max(map(len, earlier)))), dtype=np.uint64)
        for row, masks in enumerate(earlier):
            table[row, : len(masks)] = masks
        groups.append(
            PrefixGroup(
                lows=lows,
                widths=widths,
                bits=sum(_low_width(chunks[i])[1] for i in prefix),
                shifts=np.array([low for low, _ in places], dtype=np.int64),
                chunk_bits=np.array([width for _, width in places], dtype=np.int64),
                earlier=table,
                earlier_counts=np.array([len(masks) for masks in earlier], dtype=np.int64),
            )
        )
    return tuple(groups)


def layout_prefix_groups(layout: ChunkLayout) -> list[PrefixGroup]:
    """The layout's keys grouped by prefix: every key once, in lexicographic order."""
    return list(_layout_prefix_groups(layout))


def _low_width(mask: int) -> tuple[int, int]:
    low = (mask & -mask).bit_length() - 1
    return low, (mask >> low).bit_length()
