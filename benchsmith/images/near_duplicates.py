"""Sub-quadratic search for pairs of 64-bit hashes within a Hamming distance (multi-index hashing).

Why: near-duplicate images (perceptual hashes a few bits apart) leak between splits and repeat
inside samples; comparing every pair is O(n^2) (2e10 pairs for 200,000 images).

How (pigeonhole, generalised): split the 64 bits into ``m = threshold + k`` disjoint contiguous
chunks (at least 1 bit each). Two hashes within distance ``threshold`` differ in at most
``threshold`` chunks, so they agree *exactly* on at least ``k`` chunks, hence on every chunk of
at least one ``k``-subset of the chunks. For every ``k``-subset ("key"), hashes are bucketed by
their bits under that key and pairs inside a bucket become candidates, verified with an exact
popcount. ``k = 1`` is the textbook scheme (``threshold + 1`` chunks); larger ``k`` gives longer
keys (fewer, smaller buckets) at the price of more keys, and is what makes large thresholds
fast: at ``threshold = 8`` and 200,000 hashes ``k = 1`` leaves 7-bit keys and ~1.3e9
candidates, ``k = 3`` 17-bit keys and ~2e7. ``k`` is picked by a cost model
(:func:`~benchsmith.images.near_duplicate_layout.plan_layout`, with the chunking in that
module) unless given.

Each true pair is reported once: only under the lexicographically first key it agrees on (a
pair agreeing on key ``S`` is dropped there when it also agrees on an unused chunk below
``max(S)``), so no global de-duplication is needed. Identical hashes are collapsed before the
search and expanded afterwards, so a thousand blank images cost their (unavoidable) output, not
a thousand-fold bucket in every key.

Where the work happens: the bucketing and pairing of one key run in compiled kernels
(:mod:`benchsmith.images.near_duplicate_kernel`: bit permutation, radix sort, one sequential
scan), keys are shared out over threads, and this module turns the values they report back into
positions. A self-join whose keys have two chunks or more sorts once per *prefix* (the keys'
first ``k - 1`` chunks) instead of once per key, and splits each bucket of equal prefix by each
key's last chunk in cache (:class:`~benchsmith.images.near_duplicate_layout.PrefixGroup`): at
10M hashes and threshold 8, 45 global sorts instead of 165. Up to ``_BRUTE_FORCE_PAIRS`` pairs the block-wise all-pairs search runs instead (no
kernel to load for small builds).

Cost and memory: a key costs a few linear passes over the distinct hashes plus its candidates;
each thread holds three uint64 buffers of the distinct hashes, so memory stays O(n * threads +
output). Pathological inputs where many *distinct* hashes share most of their bits (huge
buckets that are not exact duplicates) remain correct but cost O(bucket^2) candidates per key.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from benchsmith.core.workers import usable_cores
from benchsmith.images.near_duplicate_layout import (
    LAST_CHUNK_BITS_MAX,
    BucketKey,
    ChunkLayout,
    PrefixGroup,
    check_threshold,
    group_bits_for,
    layout_keys,
    layout_prefix_groups,
    make_layout,
    plan_layout,
    prefix_sort_passes,
    radix_digit_bits,
    radix_passes,
    shares_prefixes,
    sort_bits_for,
)
from benchsmith.images.popcount import popcount

# up to this many pairs the block-wise xor matrix is cheaper than any index (and needs no JIT)
_BRUTE_FORCE_PAIRS = 1 << 20
_BASELINE_BLOCK_CELLS = 1 << 22  # xor cells per block of the brute-force baseline (32 MiB)


@dataclass(frozen=True)
class PairMatches:
    """Index pairs within the distance threshold, sorted by (left, right)."""

    left: np.ndarray  # int64
    right: np.ndarray  # int64
    distance: np.ndarray  # int64

    def __len__(self) -> int:
        return int(self.left.size)

    def as_set(self) -> set[tuple[int, int, int]]:
        """``{(left, right, distance)}``: handy for comparisons in tests and benchmarks."""
        return set(
            zip(self.left.tolist(), self.right.tolist(), self.distance.tolist(), strict=True)
        )


# --- input checks -------------------------------------------------------------------------


def as_hash_array(hashes: object) -> np.ndarray:
    """A 1-D uint64 array; int64 input is reinterpreted bit for bit (parquet has no uint64)."""
    array = hashes if isinstance(hashes, np.ndarray) else None
    if array is not None and array.dtype == np.int64:
        array = array.view(np.uint64)
    elif array is None or array.dtype != np.uint64:
        if array is not None and array.size and array.dtype.kind not in "uO":
            raise ValueError(f"hashes must be an array of uint64 (or int64), got {array.dtype}")
        try:  # via python ints: values >= 2**63 must not pass through float64
            array = np.array(hashes if array is None else array.tolist(), dtype=np.uint64)
        except (OverflowError, TypeError, ValueError) as exc:
            raise ValueError(f"hashes must be unsigned 64-bit integers: {exc}") from exc
    if array.ndim != 1:
        raise ValueError(f"hashes must be one-dimensional, got shape {array.shape}")
    return array


# --- search over distinct hashes ----------------------------------------------------------


def _run_keys(keys: list, job, workers: int, weight=lambda key: 1) -> list:
    """``job(key, buffers)`` for every key (or prefix group), on ``workers`` threads with a
    share of the keys each and one set of sort buffers per thread (allocated once, not once
    per key). Shares are balanced by ``weight`` (the heaviest first, each to the lightest
    share), so that no thread is left with the long tail."""
    workers = max(1, min(workers, len(keys)))
    shares: list[list] = [[] for _ in range(workers)]
    loads = [0] * workers
    for key in sorted(keys, key=weight, reverse=True):  # stable: ties keep their order
        lightest = loads.index(min(loads))
        shares[lightest].append(key)
        loads[lightest] += weight(key)

    def run(share: list[BucketKey]) -> list:
        buffers: dict[str, np.ndarray] = {}
        return [job(key, buffers) for key in share]

    if workers == 1:
        return run(shares[0])
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="near-dup") as pool:
        return [part for parts in pool.map(run, shares) for part in parts]


def _permuted_sorted(kernel, values: np.ndarray, key: BucketKey | PrefixGroup, buffers, name: str):
    """``values`` with the key's (or prefix's) bits on top, sorted by them, in this thread's
    buffers."""
    if name not in buffers:
        buffers[name] = tuple(np.empty(values.size, dtype=np.uint64) for _ in range(3))
    permuted, out, scratch = buffers[name]
    kernel.permute_bits(values, key.lows, key.widths, permuted)
    if isinstance(key, PrefixGroup):
        passes, digit = prefix_sort_passes(key.bits)
    else:
        bits = sort_bits_for(key)
        passes, digit = radix_passes(bits), radix_digit_bits(bits)
    return kernel.sort_by_top_bits(permuted, passes, digit, out, scratch)


def _collect(
    kernel, key: BucketKey | PrefixGroup, scan
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Run ``scan(out_a, out_b) -> count`` (again with room for all when its buffers were too
    small) and return the pairs as original values with their distances."""
    capacity = 4096
    while True:
        out_a = np.empty(capacity, dtype=np.uint64)
        out_b = np.empty(capacity, dtype=np.uint64)
        count = scan(out_a, out_b)
        if count <= capacity:
            break
        capacity = count
    left, right = np.empty(count, dtype=np.uint64), np.empty(count, dtype=np.uint64)
    kernel.unpermute_bits(out_a[:count], key.lows, key.widths, left)
    kernel.unpermute_bits(out_b[:count], key.lows, key.widths, right)
    return left, right, popcount(left ^ right)


def _self_join_distinct(
    values: np.ndarray, layout: ChunkLayout, workers: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs (positions into the sorted distinct ``values``) within the threshold, each once."""
    if shares_prefixes(layout):
        return _self_join_by_prefix(values, layout, workers)
    from benchsmith.images import near_duplicate_kernel as kernel

    def job(key: BucketKey, buffers: dict):
        ordered = _permuted_sorted(kernel, values, key, buffers, "values")
        return _collect(
            kernel,
            key,
            lambda out_a, out_b: kernel.pairs_in_buckets(
                ordered, group_bits_for(key), key.bits, key.earlier, layout.threshold, out_a, out_b
            ),
        )

    parts = _run_keys(layout_keys(layout), job, workers)
    return _positions(values, values, parts)


def _self_join_by_prefix(
    values: np.ndarray, layout: ChunkLayout, workers: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`_self_join_distinct` with one sort per prefix group (keys sharing all but their
    last chunk) instead of one per key: at 10M hashes and threshold 8, 45 global sorts instead
    of 165, each bucket then split by the keys' last chunks in cache."""
    from benchsmith.images import near_duplicate_kernel as kernel

    def job(group: PrefixGroup, buffers: dict):
        ordered = _permuted_sorted(kernel, values, group, buffers, "values")
        if "local" not in buffers:
            buffers["local"] = np.empty(values.size, dtype=np.uint64)
            buffers["counts"] = np.zeros((1 << LAST_CHUNK_BITS_MAX) + 1, dtype=np.int64)
        return _collect(
            kernel,
            group,
            lambda out_a, out_b: kernel.pairs_under_prefix(
                ordered,
                group.bits,
                group.shifts,
                group.chunk_bits,
                group.earlier,
                group.earlier_counts,
                layout.threshold,
                buffers["local"],
                buffers["counts"],
                out_a,
                out_b,
            ),  # fmt: skip
        )

    groups = layout_prefix_groups(layout)
    parts = _run_keys(groups, job, workers, weight=lambda group: group.n_keys)
    return _positions(values, values, parts)


def _cross_join_distinct(
    query: np.ndarray, reference: np.ndarray, layout: ChunkLayout, workers: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pairs (query position, reference position) of distinct values within the threshold."""
    from benchsmith.images import near_duplicate_kernel as kernel

    def job(key: BucketKey, buffers: dict):
        q = _permuted_sorted(kernel, query, key, buffers, "query")
        r = _permuted_sorted(kernel, reference, key, buffers, "reference")
        return _collect(
            kernel,
            key,
            lambda out_a, out_b: kernel.pairs_across_buckets(
                q, r, group_bits_for(key), key.bits, key.earlier, layout.threshold, out_a, out_b
            ),
        )

    parts = _run_keys(layout_keys(layout), job, workers)
    return _positions(query, reference, parts)


def _positions(
    left_values: np.ndarray, right_values: np.ndarray, parts: list
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The kernels report values; sorted distinct arrays turn them back into positions."""
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    left = np.concatenate([part[0] for part in parts])
    right = np.concatenate([part[1] for part in parts])
    distance = np.concatenate([part[2] for part in parts]).astype(np.int64)
    return (
        np.searchsorted(left_values, left).astype(np.int64),
        np.searchsorted(right_values, right).astype(np.int64),
        distance,
    )


def _concat(parts: list[np.ndarray]) -> np.ndarray:
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)


# --- identical hashes: collapse, then expand ----------------------------------------------


@dataclass(frozen=True)
class _Groups:
    """Original positions grouped by distinct value: group g is members[start[g]:start[g]+size[g]].

    When every hash is distinct (the usual case) the groups are not built: ``members`` is None
    and :meth:`positions` finds the few positions a search reports (an argsort of 10M hashes
    takes 1.6 s; sorting them 0.1 s)."""

    values: np.ndarray
    members: np.ndarray | None
    start: np.ndarray | None
    size: np.ndarray | None
    hashes: np.ndarray  # the original input

    @classmethod
    def of(cls, hashes: np.ndarray) -> _Groups:
        ordered = np.sort(hashes)
        if ordered.size < 2 or bool((ordered[1:] != ordered[:-1]).all()):
            return cls(ordered, None, None, None, hashes)
        return cls.grouped(hashes)

    @classmethod
    def grouped(cls, hashes: np.ndarray) -> _Groups:
        # one stable argsort gives the distinct values, their members and the group bounds
        members = np.argsort(hashes, kind="stable").astype(np.int64)
        ordered = hashes[members]
        new_group = np.ones(ordered.size, dtype=bool)
        new_group[1:] = ordered[1:] != ordered[:-1]
        start = np.flatnonzero(new_group).astype(np.int64)
        size = np.diff(np.append(start, ordered.size)).astype(np.int64)
        return cls(ordered[start], members, start, size, hashes)

    @property
    def all_single(self) -> bool:
        return self.members is None or self.values.size == self.members.size

    def with_members(self) -> _Groups:
        """These groups with ``members``, ``start`` and ``size`` built (for :func:`_expand`)."""
        return self if self.members is not None else _Groups.grouped(self.hashes)

    def positions(self, index: np.ndarray) -> np.ndarray:
        """The original position of each distinct value ``values[index]`` (all single)."""
        if self.members is not None:
            return self.members[index]
        return _original_positions(self.hashes, self.values[index])


def _original_positions(hashes: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Where each of ``wanted`` (values that occur once in ``hashes``) sits in ``hashes``: one
    pass over ``hashes`` through a bit table of the wanted values' multiplicative hashes (a
    few per cent of false hits, checked exactly), instead of an argsort of all of them."""
    if wanted.size == 0:
        return np.zeros(0, dtype=np.int64)
    unique, inverse = np.unique(wanted, return_inverse=True)
    bits = max(16, int(unique.size).bit_length() + 6)
    shift = np.uint64(64 - bits)
    mix = np.uint64(0x9E3779B97F4A7C15)
    table = np.zeros(1 << bits, dtype=bool)
    table[((unique * mix) >> shift).astype(np.intp)] = True
    candidates = np.flatnonzero(table[((hashes * mix) >> shift).astype(np.intp)])
    found = hashes[candidates]
    at = np.searchsorted(unique, found)
    exact = unique[np.minimum(at, unique.size - 1)] == found
    positions = np.empty(unique.size, dtype=np.int64)
    positions[at[exact]] = candidates[exact]
    return positions[inverse.reshape(-1)]


def _expand(
    left_groups: _Groups, left: np.ndarray, right_groups: _Groups, right: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Every (left member, right member) of each group pair (the product of the two groups)."""
    left_groups, right_groups = left_groups.with_members(), right_groups.with_members()
    left_size, right_size = left_groups.size[left], right_groups.size[right]
    counts = left_size * right_size
    pair = np.repeat(np.arange(left.size), counts)
    within = np.arange(pair.size) - np.repeat(np.cumsum(counts) - counts, counts)
    right_count = right_size[pair]
    members_left = left_groups.members[left_groups.start[left[pair]] + within // right_count]
    members_right = right_groups.members[right_groups.start[right[pair]] + within % right_count]
    return members_left, members_right


def _within_groups(groups: _Groups) -> tuple[np.ndarray, np.ndarray]:
    """All pairs of positions holding the same value (distance 0), left < right."""
    if groups.all_single:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    label = np.repeat(np.arange(groups.size.size), groups.size)  # group of each members slot
    same_as_next = label[1:] == label[:-1]
    lefts, rights = [], []
    active, offset = np.flatnonzero(same_as_next), 1
    while active.size:
        lefts.append(groups.members[active])
        rights.append(groups.members[active + offset])
        active = active[active + offset < same_as_next.size]
        active = active[same_as_next[active + offset]]
        offset += 1
    return _concat(lefts), _concat(rights)


def _sorted_matches(left: np.ndarray, right: np.ndarray, distance: np.ndarray) -> PairMatches:
    order = np.lexsort((right, left))
    return PairMatches(
        left[order].astype(np.int64),
        right[order].astype(np.int64),
        distance[order].astype(np.int64),
    )


# --- public API ---------------------------------------------------------------------------


def find_near_duplicate_pairs(
    hashes: object,
    threshold: int,
    *,
    chunks_per_key: int | None = None,
    workers: int | None = None,
) -> PairMatches:
    """Every unordered pair ``i < j`` with ``popcount(hashes[i] ^ hashes[j]) <= threshold``.

    Exact duplicates (distance 0) are included. ``chunks_per_key`` overrides the layout chosen
    by :func:`plan_layout`, ``workers`` the number of threads (default: the usable cores); the
    result is the same either way, only the speed differs.
    """
    values = as_hash_array(hashes)
    threshold = check_threshold(threshold)
    workers = usable_cores() if workers is None else max(1, int(workers))
    if values.size * (values.size - 1) // 2 <= _BRUTE_FORCE_PAIRS and chunks_per_key is None:
        return all_pairs_baseline(values, threshold)
    groups = _Groups.of(values)
    distinct = groups.values
    same_left, same_right = _within_groups(groups)
    parts_left, parts_right, parts_dist = [same_left], [same_right], [np.zeros_like(same_left)]
    if threshold > 0 and distinct.size > 1:
        layout = (
            make_layout(threshold, chunks_per_key)
            if chunks_per_key is not None
            else plan_layout(distinct.size, None, threshold, workers=workers)
        )
        a, b, distance = _self_join_distinct(distinct, layout, workers)
        if groups.all_single:
            left, right = groups.positions(a), groups.positions(b)
        else:
            left, right = _expand(groups, a, groups, b)
            distance = np.repeat(distance, groups.size[a] * groups.size[b])
        parts_left.append(np.minimum(left, right))
        parts_right.append(np.maximum(left, right))
        parts_dist.append(distance)
    return _sorted_matches(_concat(parts_left), _concat(parts_right), _concat(parts_dist))


def find_cross_matches(
    query: object,
    reference: object,
    threshold: int,
    *,
    chunks_per_key: int | None = None,
    workers: int | None = None,
) -> PairMatches:
    """Every (query index, reference index) within ``threshold``, e.g. test images vs train.

    ``left`` indexes ``query`` and ``right`` indexes ``reference``; sorted by (left, right).
    """
    query_values, reference_values = as_hash_array(query), as_hash_array(reference)
    threshold = check_threshold(threshold)
    workers = usable_cores() if workers is None else max(1, int(workers))
    if query_values.size == 0 or reference_values.size == 0:
        empty = np.zeros(0, dtype=np.int64)
        return PairMatches(empty, empty, empty)
    if query_values.size * reference_values.size <= _BRUTE_FORCE_PAIRS and chunks_per_key is None:
        return all_pairs_baseline(query_values, threshold, reference_values)
    query_groups, reference_groups = _Groups.of(query_values), _Groups.of(reference_values)
    layout = (
        make_layout(threshold, chunks_per_key)
        if chunks_per_key is not None
        else plan_layout(
            query_groups.values.size, reference_groups.values.size, threshold, workers=workers
        )
    )
    a, b, distance = _cross_join_distinct(
        query_groups.values, reference_groups.values, layout, workers
    )
    if query_groups.all_single and reference_groups.all_single:
        left, right = query_groups.positions(a), reference_groups.positions(b)
    else:
        query_groups, reference_groups = (
            query_groups.with_members(),
            reference_groups.with_members(),
        )
        left, right = _expand(query_groups, a, reference_groups, b)
        distance = np.repeat(distance, query_groups.size[a] * reference_groups.size[b])
    return _sorted_matches(left, right, distance)


def all_pairs_baseline(
    hashes: object, threshold: int, reference: object | None = None
) -> PairMatches:
    """Brute force over every pair, block by block: the ground truth for tests and the bench.

    Without ``reference`` it is a self-join (pairs ``i < j``); with it, a cross join like
    :func:`find_cross_matches`. O(n^2) time, O(block) memory.
    """
    left_values = as_hash_array(hashes)
    threshold = check_threshold(threshold)
    self_join = reference is None
    right_values = left_values if self_join else as_hash_array(reference)
    n_right = max(right_values.size, 1)
    rows = max(1, _BASELINE_BLOCK_CELLS // n_right)
    lefts, rights, dists = [], [], []
    for begin in range(0, left_values.size, rows):
        block = left_values[begin : begin + rows]
        column0 = begin + 1 if self_join else 0  # self-join: only columns right of the block
        distance = popcount(block[:, None] ^ right_values[None, column0:])
        hit_row, hit_col = np.nonzero(distance <= threshold)
        i, j = hit_row + begin, hit_col + column0
        keep = i < j if self_join else np.ones(i.size, dtype=bool)
        lefts.append(i[keep])
        rights.append(j[keep])
        dists.append(distance[hit_row[keep], hit_col[keep]])
    return _sorted_matches(_concat(lefts), _concat(rights), _concat(dists))
