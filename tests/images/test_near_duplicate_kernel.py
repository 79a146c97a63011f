"""The compiled kernels of the near-duplicate search: permutation, radix sort, pair buffers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from benchsmith.images import near_duplicate_kernel as kernel
from benchsmith.images.near_duplicate_layout import (
    layout_keys,
    layout_prefix_groups,
    make_layout,
    modelled_seconds,
    permute_int,
    plan_layout,
    shares_prefixes,
)
from benchsmith.images.near_duplicates import (
    all_pairs_baseline,
    find_cross_matches,
    find_near_duplicate_pairs,
)
from benchsmith.images.popcount import popcount


def random_hashes(seed: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 2**64, size=n, dtype=np.uint64)


@pytest.mark.parametrize("threshold,chunks_per_key", [(8, 3), (8, 4), (3, 2), (1, 4)])
def test_permutation_is_a_bijection_that_keeps_distances(threshold, chunks_per_key):
    values = random_hashes(0, 300)
    for key in layout_keys(make_layout(threshold, chunks_per_key)):
        assert sum(key.widths) == 64
        permuted, restored = np.empty_like(values), np.empty_like(values)
        kernel.permute_bits(values, key.lows, key.widths, permuted)
        kernel.unpermute_bits(permuted, key.lows, key.widths, restored)
        assert np.array_equal(restored, values)
        assert np.array_equal(
            popcount(permuted[1:] ^ permuted[:-1]), popcount(values[1:] ^ values[:-1])
        )
        assert permuted[:5].tolist() == [
            permute_int(v, key.lows, key.widths) for v in values[:5].tolist()
        ]


@pytest.mark.parametrize("passes,digit", [(1, 8), (1, 12), (2, 11), (2, 12), (3, 8), (3, 11)])
def test_radix_sort_orders_by_top_bits_and_is_stable(passes, digit):
    values = random_hashes(1, 5000)
    values[100:200] = values[0] ^ np.arange(100, dtype=np.uint64)  # equal top bits, low differ
    out, scratch = np.empty_like(values), np.empty_like(values)
    ordered = kernel.sort_by_top_bits(values, passes, digit, out, scratch)
    shift = np.uint64(64 - passes * digit)
    assert sorted(ordered.tolist()) == sorted(values.tolist())
    assert np.all(np.diff((ordered >> shift).astype(np.float64)) >= 0)
    expected = sorted(values.tolist(), key=lambda v: v >> int(shift))  # Python's sort is stable
    assert ordered.tolist() == expected


def test_more_pairs_under_one_key_than_the_first_buffer_holds():
    """200 hashes 1-3 bits from one base: ~20,000 pairs, most under the first key (> 4,096)."""
    rng = np.random.default_rng(2)
    base = int(random_hashes(3, 1)[0])
    hashes = []
    for _ in range(200):
        value = base
        for bit in rng.choice(64, size=int(rng.integers(1, 4)), replace=False):
            value ^= 1 << int(bit)
        hashes.append(value)
    hashes = np.array(hashes, dtype=np.uint64)
    expected = all_pairs_baseline(hashes, 8).as_set()
    assert len(expected) > 10_000
    assert find_near_duplicate_pairs(hashes, 8, chunks_per_key=2).as_set() == expected
    cross = find_cross_matches(hashes[:100], hashes[100:], 8, chunks_per_key=2)
    assert cross.as_set() == all_pairs_baseline(hashes[:100], 8, hashes[100:]).as_set()


@pytest.mark.parametrize("workers", [1, 2, 5])
def test_threads_do_not_change_the_pairs(workers):
    hashes = random_hashes(4, 3000)
    hashes[1::7] = hashes[::7][: hashes[1::7].size] ^ np.uint64(0b1011)  # distance-3 pairs
    expected = all_pairs_baseline(hashes, 8).as_set()
    found = find_near_duplicate_pairs(hashes, 8, chunks_per_key=3, workers=workers)
    assert found.as_set() == expected
    cross = find_cross_matches(hashes[:1000], hashes[1000:], 8, chunks_per_key=3, workers=workers)
    assert cross.as_set() == all_pairs_baseline(hashes[:1000], 8, hashes[1000:]).as_set()


def test_cost_model_grows_with_keys_and_candidates():
    """More hashes cost more; at 10M the model picks longer keys than at 200,000."""
    small, large = plan_layout(200_000, None, 8, workers=2), plan_layout(10**7, None, 8, workers=2)
    assert large.chunks_per_key > small.chunks_per_key
    assert modelled_seconds(large, 10**7, None, 2) > modelled_seconds(small, 200_000, None, 2)
    assert modelled_seconds(small, 200_000, None, 1) > modelled_seconds(small, 200_000, None, 2)


@pytest.mark.parametrize("threshold,chunks_per_key", [(8, 2), (8, 3), (8, 4), (12, 3), (20, 2)])
def test_prefix_groups_hold_every_key_once_with_its_earlier_chunks(threshold, chunks_per_key):
    """Grouped by prefix, the keys are the layout's keys (each once), each group's permutation
    puts its prefix on top, each key's last chunk sits where the kernel reads it, and each
    key drops exactly the pairs the per-key search drops (the unused chunks below its last)."""
    layout = make_layout(threshold, chunks_per_key)
    assert shares_prefixes(layout)
    chunks = layout.chunk_masks
    seen = []
    for group in layout_prefix_groups(layout):
        ones = (1 << 64) - 1
        assert permute_int(ones, group.lows, group.widths) == ones  # a bijection of the bits
        prefix = [q for q in range(len(chunks))
                  if permute_int(chunks[q], group.lows, group.widths) >> (64 - group.bits)]  # fmt: skip
        assert len(prefix) == chunks_per_key - 1
        for t in range(group.n_keys):
            place = ((1 << int(group.chunk_bits[t])) - 1) << int(group.shifts[t])
            [last] = [q for q in range(len(chunks))
                      if permute_int(chunks[q], group.lows, group.widths) == place]  # fmt: skip
            key = (*prefix, last)
            seen.append(key)
            marks = group.earlier[t, : group.earlier_counts[t]].tolist()
            dropped = {q for q in range(len(chunks))
                       if permute_int(chunks[q], group.lows, group.widths) in marks}  # fmt: skip
            assert dropped == {q for q in range(last) if q not in key}
    assert sorted(seen) == seen  # lexicographic, as the per-key search runs them
    assert seen == list(itertools.combinations(range(len(chunks)), chunks_per_key))
    assert len(seen) == len(layout_keys(layout))


def test_prefix_groups_are_used_only_where_they_fit():
    assert not shares_prefixes(make_layout(8, 1))  # one chunk a key: no prefix to share
    assert not shares_prefixes(make_layout(1, 2))  # 21-bit chunks: too wide to split in L1
    assert shares_prefixes(make_layout(8, 3))


@pytest.mark.parametrize("chunks_per_key", [2, 3, 4])
def test_prefix_search_equals_all_pairs_on_clustered_hashes(chunks_per_key):
    """Hashes in tight clusters make large buckets (many values per prefix, many pairs per
    key): the grouped search still finds exactly the all-pairs answer."""
    rng = np.random.default_rng(chunks_per_key)
    centres = rng.integers(0, 2**64, size=40, dtype=np.uint64)
    flips = np.zeros(3000, dtype=np.uint64)
    for _ in range(6):  # up to 6 bits flipped around a centre
        flips |= rng.integers(0, 2, size=3000).astype(np.uint64) << rng.integers(
            0, 64, size=3000
        ).astype(np.uint64)
    hashes = centres[rng.integers(0, 40, size=3000)] ^ flips
    expected = all_pairs_baseline(hashes, 8).as_set()
    assert len(expected) > 10_000
    assert find_near_duplicate_pairs(hashes, 8, chunks_per_key=chunks_per_key).as_set() == expected
