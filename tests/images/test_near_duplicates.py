"""Multi-index Hamming search against the brute-force baseline, on random hashes with planted pairs."""

from __future__ import annotations

import numpy as np
import pytest

from benchsmith.images.near_duplicates import (
    PairMatches,
    all_pairs_baseline,
    find_cross_matches,
    find_near_duplicate_pairs,
    make_layout,
    plan_layout,
)
from benchsmith.images.popcount import popcount, popcount_lut

ALL_ONES = (1 << 64) - 1


def flip_bits(value: int, distance: int, rng: np.random.Generator) -> int:
    for bit in rng.choice(64, size=distance, replace=False):
        value ^= 1 << int(bit)
    return value


def planted_hashes(
    seed: int, n: int, threshold: int, pairs_per_distance: int = 3
) -> tuple[np.ndarray, list[tuple[int, int, int]]]:
    """Random hashes; for every distance 0..threshold+1, pairs (i, j, d) set d bits apart."""
    rng = np.random.default_rng(seed)
    hashes = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    distances = [d for d in range(threshold + 2) for _ in range(pairs_per_distance)]
    slots = rng.permutation(n)[: 2 * len(distances)].reshape(-1, 2)
    planted = []
    for (i, j), d in zip(slots.tolist(), distances, strict=True):
        hashes[j] = flip_bits(int(hashes[i]), d, rng)
        planted.append((min(i, j), max(i, j), d))
    return hashes, planted


def assert_same(found: PairMatches, expected: PairMatches) -> None:
    assert np.array_equal(found.left, expected.left)
    assert np.array_equal(found.right, expected.right)
    assert np.array_equal(found.distance, expected.distance)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("threshold", [0, 3, 8, 10])
def test_index_equals_all_pairs_and_finds_every_planted_pair(seed, threshold):
    hashes, planted = planted_hashes(seed, 1500, threshold)
    found = find_near_duplicate_pairs(hashes, threshold)
    assert_same(found, all_pairs_baseline(hashes, threshold))
    pairs = found.as_set()
    for i, j, d in planted:
        if d <= threshold:
            assert (i, j, d) in pairs
        else:
            assert not any(p[:2] == (i, j) for p in pairs)  # exactly threshold + 1: no match


@pytest.mark.parametrize("chunks_per_key", [1, 2, 3, 4])
def test_every_layout_gives_the_same_pairs(chunks_per_key):
    hashes, _ = planted_hashes(7, 1200, 8, pairs_per_distance=5)
    found = find_near_duplicate_pairs(hashes, 8, chunks_per_key=chunks_per_key)
    assert_same(found, all_pairs_baseline(hashes, 8))


def test_pairs_are_sorted_each_once_with_left_below_right():
    hashes, _ = planted_hashes(3, 800, 10, pairs_per_distance=10)
    found = find_near_duplicate_pairs(hashes, 10)
    assert len(found) > 0 and np.all(found.left < found.right)
    codes = found.left * len(hashes) + found.right
    assert np.all(np.diff(codes) > 0)  # strictly increasing: sorted, no repeats
    assert found.left.dtype == np.int64 and found.distance.dtype == np.int64


def test_many_identical_hashes_stay_correct():
    """Blank images: hundreds of equal hashes (one huge bucket in every key) plus a 1-bit cousin."""
    rng = np.random.default_rng(5)
    hashes = rng.integers(0, 2**64, size=900, dtype=np.uint64)
    blank = int(hashes[0])
    hashes[rng.permutation(900)[:250]] = blank
    cousins = rng.permutation(900)[:40]
    hashes[cousins] = blank ^ (1 << 17)
    found = find_near_duplicate_pairs(hashes, 3)
    assert_same(found, all_pairs_baseline(hashes, 3))
    n_blank = int((hashes == np.uint64(blank)).sum())
    n_cousin = int((hashes == np.uint64(blank ^ (1 << 17))).sum())
    exact = n_blank * (n_blank - 1) // 2 + n_cousin * (n_cousin - 1) // 2
    assert int((found.distance == 0).sum()) >= exact
    assert int((found.distance == 1).sum()) >= n_blank * n_cousin


def test_threshold_63_uses_one_bit_chunks_and_stays_exact():
    rng = np.random.default_rng(11)
    hashes = rng.integers(0, 2**64, size=150, dtype=np.uint64)
    hashes[1] = ~hashes[0]  # distance 64: the only pairs beyond 63
    assert_same(find_near_duplicate_pairs(hashes, 63), all_pairs_baseline(hashes, 63))
    assert (0, 1) not in {p[:2] for p in find_near_duplicate_pairs(hashes, 63).as_set()}


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("threshold", [0, 3, 8, 10])
def test_cross_matches_equal_all_pairs(seed, threshold):
    hashes, planted = planted_hashes(seed, 2000, threshold)
    query, reference = hashes[:900], hashes[900:]
    reference[:5] = query[3]  # repeated values on both sides
    query[10] = query[3]
    found = find_cross_matches(query, reference, threshold)
    assert_same(found, all_pairs_baseline(query, threshold, reference=reference))
    crossing = [(i, j - 900, d) for i, j, d in planted if i < 900 <= j and d <= threshold]
    assert set(crossing) <= found.as_set()


@pytest.mark.parametrize("chunks_per_key", [1, 2, 3])
def test_cross_matches_with_every_layout(chunks_per_key):
    hashes, _ = planted_hashes(4, 1600, 8, pairs_per_distance=6)
    query, reference = hashes[:700], hashes[700:]
    found = find_cross_matches(query, reference, 8, chunks_per_key=chunks_per_key)
    assert_same(found, all_pairs_baseline(query, 8, reference=reference))


def test_empty_and_tiny_inputs():
    empty = np.zeros(0, dtype=np.uint64)
    assert len(find_near_duplicate_pairs(empty, 4)) == 0
    assert len(find_near_duplicate_pairs(np.array([5], dtype=np.uint64), 4)) == 0
    assert len(find_cross_matches(empty, np.array([1], dtype=np.uint64), 4)) == 0
    tiny = find_near_duplicate_pairs(np.array([0b1, 0b11, 0b1, 1 << 40], dtype=np.uint64), 1)
    assert tiny.as_set() == {(0, 1, 1), (0, 2, 0), (1, 2, 1)}


def test_signed_and_python_int_inputs_are_read_bit_for_bit():
    values = [ALL_ONES, ALL_ONES ^ 0b101, 12345, (1 << 63) | 1]
    expected = find_near_duplicate_pairs(np.array(values, dtype=np.uint64), 2)
    assert expected.as_set() == {(0, 1, 2)}
    as_int64 = np.array(values, dtype=np.uint64).view(np.int64)
    assert find_near_duplicate_pairs(as_int64, 2).as_set() == expected.as_set()
    assert find_near_duplicate_pairs(values, 2).as_set() == expected.as_set()


@pytest.mark.parametrize("bad", [-1, 64, 100, 2.5, True, "3"])
def test_threshold_outside_0_to_63_is_rejected(bad):
    hashes = np.arange(10, dtype=np.uint64)
    with pytest.raises(ValueError, match="threshold"):
        find_near_duplicate_pairs(hashes, bad)
    with pytest.raises(ValueError, match="threshold"):
        find_cross_matches(hashes, hashes, bad)


def test_bad_hash_arrays_are_rejected():
    with pytest.raises(ValueError):
        find_near_duplicate_pairs(np.zeros((3, 2), dtype=np.uint64), 2)
    with pytest.raises(ValueError):
        find_near_duplicate_pairs(np.zeros(3, dtype=np.float64), 2)
    with pytest.raises(ValueError):
        find_near_duplicate_pairs([1 << 64], 2)


@pytest.mark.parametrize(("threshold", "k"), [(0, 1), (3, 2), (8, 1), (8, 3), (20, 4), (63, 1)])
def test_layout_chunks_cover_64_bits_disjointly(threshold, k):
    layout = make_layout(threshold, k)
    assert len(layout.chunk_masks) == threshold + k
    union = 0
    for mask in layout.chunk_masks:
        assert mask and union & mask == 0
        union |= mask
    assert union == ALL_ONES
    widths = {bin(mask).count("1") for mask in layout.chunk_masks}
    assert max(widths) - min(widths) <= 1


def test_layout_rejects_more_chunks_than_bits():
    with pytest.raises(ValueError, match="chunks_per_key"):
        make_layout(63, 2)
    with pytest.raises(ValueError, match="chunks_per_key"):
        make_layout(5, 0)


def test_cost_model_prefers_longer_keys_for_large_inputs():
    """At threshold 8 one-chunk keys are 7 bits: 200,000 hashes would give ~1e9 candidates."""
    assert plan_layout(200_000, None, 8).chunks_per_key > 1
    assert plan_layout(200, None, 8).chunks_per_key == 1


def test_popcount_lookup_table_matches_bit_count():
    rng = np.random.default_rng(9)
    values = np.concatenate(
        [rng.integers(0, 2**64, size=500, dtype=np.uint64), np.array([0, ALL_ONES], np.uint64)]
    )
    expected = [int(v).bit_count() for v in values.tolist()]
    assert popcount_lut(values).tolist() == expected
    assert popcount(values).tolist() == expected


@pytest.mark.parametrize("duplicated", ["query", "reference", "both", "neither"])
def test_cross_matches_with_duplicates_on_either_side(duplicated):
    """A side whose hashes are all distinct skips building groups; mixed with a side that has
    repeats the pairs are still every (query, reference) position within the threshold."""
    rng = np.random.default_rng(7)
    query = rng.integers(0, 2**64, size=1500, dtype=np.uint64)
    reference = query[rng.integers(0, 1500, size=1500)] ^ (
        np.uint64(1) << rng.integers(0, 64, size=1500).astype(np.uint64)
    )
    reference[::3] = rng.integers(0, 2**64, size=500, dtype=np.uint64)
    if duplicated in ("query", "both"):
        query[::5] = query[0]
    if duplicated in ("reference", "both"):
        reference[1::7] = reference[1]
    expected = all_pairs_baseline(query, 8, reference).as_set()
    assert find_cross_matches(query, reference, 8, chunks_per_key=3).as_set() == expected


def test_positions_of_distinct_hashes_whose_low_bits_all_agree():
    """Distinct hashes that differ only in their top bits (every low bit equal) are still
    mapped back to the positions they came from."""
    hashes = (np.arange(5000, dtype=np.uint64) << np.uint64(50)) | np.uint64(0x3FF)
    hashes = np.random.default_rng(3).permutation(hashes)
    hashes[17] ^= np.uint64(1)  # and one whose low bits differ
    found = find_near_duplicate_pairs(hashes, 1, chunks_per_key=2)
    assert len(found) > 1000  # hashes one top bit apart
    assert found.as_set() == all_pairs_baseline(hashes, 1).as_set()
