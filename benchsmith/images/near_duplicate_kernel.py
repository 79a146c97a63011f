"""Compiled inner loops of the near-duplicate search: bucket by one key, pair inside buckets.

Why compiled: at 10 million hashes a key costs one pass of bucketing and one of pairing; in
NumPy each step is a full-size temporary and the pairing needs random gathers
(``values[order[...]]``, ~0.8 s per key at 10M), so a search over hundreds of keys took minutes.

How: Hamming distance does not care where the bits sit, so each value is first *permuted* so
that the key's bits come on top (:func:`permute_bits`, a bijection of the 64 bits). Sorting the
permuted values by their top bits (:func:`sort_by_top_bits`, a least-significant-digit radix
sort whose counters fit in cache) puts every bucket together with no index array and no
gathers, and one sequential scan (:func:`pairs_in_buckets`) compares each value with the rest
of its bucket. Pairs come back as permuted values; :func:`unpermute_bits` restores them.

The pieces of a permutation are passed as tuples so that numba compiles the per-value loop
with its length known (about 5x faster than arrays). Every function is ``nogil``: the caller
runs keys on several threads, each with its own buffers (see
:mod:`benchsmith.images.near_duplicates`).
"""

from __future__ import annotations

import numba
import numpy as np

from benchsmith.core.jit import ready_numba

ready_numba()  # before the first kernel: see benchsmith.core.jit

_ONE = np.uint64(1)
_ZERO = np.uint64(0)  # compare uint64 with uint64: numba turns uint64 == int64 into floats


@numba.njit(cache=True, nogil=True, inline="always")
def _popcount(value: np.uint64) -> np.int64:
    # SWAR popcount; LLVM turns this idiom into a single popcnt instruction where there is one
    value = value - ((value >> _ONE) & np.uint64(0x5555555555555555))
    value = (value & np.uint64(0x3333333333333333)) + (
        (value >> np.uint64(2)) & np.uint64(0x3333333333333333)
    )
    value = (value + (value >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((value * np.uint64(0x0101010101010101)) >> np.uint64(56))


@numba.njit(cache=True, nogil=True)
def permute_bits(values: np.ndarray, lows: tuple, widths: tuple, out: np.ndarray) -> None:
    """``out[i]``: the pieces ``(lows[q], widths[q])`` of ``values[i]`` stacked from the top bit
    down, first piece highest. The pieces must cover the 64 bits exactly once."""
    for i in range(values.size):
        value = values[i]
        permuted = np.uint64(0)
        shift = np.uint64(64)
        for q in range(len(lows)):
            width = np.uint64(widths[q])
            shift -= width
            permuted |= ((value >> np.uint64(lows[q])) & ((_ONE << width) - _ONE)) << shift
        out[i] = permuted


@numba.njit(cache=True, nogil=True)
def unpermute_bits(values: np.ndarray, lows: tuple, widths: tuple, out: np.ndarray) -> None:
    """The inverse of :func:`permute_bits` with the same pieces."""
    for i in range(values.size):
        permuted = values[i]
        value = np.uint64(0)
        shift = np.uint64(64)
        for q in range(len(lows)):
            width = np.uint64(widths[q])
            shift -= width
            value |= ((permuted >> shift) & ((_ONE << width) - _ONE)) << np.uint64(lows[q])
        out[i] = value


@numba.njit(cache=True, nogil=True)
def sort_by_top_bits(
    values: np.ndarray, passes: int, digit: int, out: np.ndarray, scratch: np.ndarray
) -> np.ndarray:
    """``values`` ordered by their top ``passes * digit`` bits (stable LSD radix sort).

    The counters of every pass are filled in one read of ``values``; the passes then move the
    values between ``out`` and ``scratch`` (each at least ``values.size`` long); the buffer
    holding the result is returned, trimmed to ``values.size``.
    """
    n = values.size
    low = 64 - passes * digit
    buckets = 1 << digit
    mask = np.uint64(buckets - 1)
    counts = np.zeros((passes, buckets), dtype=np.int64)
    for i in range(n):
        value = values[i]
        for step in range(passes):
            counts[step, (value >> np.uint64(low + step * digit)) & mask] += 1
    for step in range(passes):
        total = 0
        for d in range(buckets):
            count = counts[step, d]
            counts[step, d] = total
            total += count
    source = values
    target = out
    for step in range(passes):
        shift = np.uint64(low + step * digit)
        for i in range(n):
            value = source[i]
            d = (value >> shift) & mask
            position = counts[step, d]
            target[position] = value
            counts[step, d] = position + 1
        source = target
        target = scratch if source is out else out
    return source[:n]


@numba.njit(cache=True, nogil=True, inline="always")
def _reported_here(diff: np.uint64, threshold: int, earlier: np.ndarray) -> bool:
    """Within the threshold, and this key is the first the pair agrees on: it differs on every
    unused chunk below the key's last chunk (else an earlier key reported it)."""
    if _popcount(diff) > threshold:
        return False
    for e in range(earlier.size):  # noqa: SIM110 (numba compiles no generator in all())
        if diff & earlier[e] == _ZERO:
            return False
    return True


@numba.njit(cache=True, nogil=True, inline="always")
def _within(a: np.uint64, values: np.ndarray, start: int, end: int, threshold: int) -> np.int64:
    """How many of ``values[start:end]`` lie within ``threshold`` of ``a``: a loop with a known
    trip count and no stores, so LLVM vectorises it (``vpopcntq`` where the CPU has it). Most
    candidates share a bucket by chance and fail this count; only a value with a hit is
    looked at again, pair by pair."""
    hits = np.int64(0)
    for j in range(start, end):
        hits += np.int64(_popcount(a ^ values[j]) <= threshold)
    return hits


@numba.njit(cache=True, nogil=True)
def pairs_in_buckets(
    ordered: np.ndarray,
    sorted_bits: int,
    key_bits: int,
    earlier: np.ndarray,
    threshold: int,
    out_a: np.ndarray,
    out_b: np.ndarray,
) -> int:
    """Every pair of ``ordered`` (permuted values sorted by their top ``sorted_bits`` bits) that
    agrees on the top ``key_bits`` bits, lies within ``threshold`` and is reported under this
    key (``earlier``: permuted chunk masks), written to ``out_a``/``out_b`` as far as they
    reach. Returns the number of pairs: when it exceeds the buffers, call again with larger
    ones (growing buffers inside the loop costs ~15x in the loop itself).

    Bucket by bucket (a run of equal top bits): each value is first counted against the rest
    of its bucket (:func:`_within`), and only a value with a hit is paired."""
    count = 0
    capacity = out_a.size
    sorted_shift = np.uint64(64 - sorted_bits)
    key_shift = np.uint64(64 - key_bits)
    n = ordered.size
    start = 0
    while start < n:
        top = ordered[start] >> sorted_shift
        end = start + 1
        while end < n and ordered[end] >> sorted_shift == top:
            end += 1
        for i in range(start, end - 1):
            a = ordered[i]
            if _within(a, ordered, i + 1, end, threshold) == 0:
                continue
            for j in range(i + 1, end):
                diff = a ^ ordered[j]
                if diff >> key_shift == _ZERO and _reported_here(diff, threshold, earlier):
                    # written out here and in pairs_across_buckets on purpose: a helper that
                    # takes the output arrays made numba count references per pair (1M hashes:
                    # 2.6 s -> 7.1 s)
                    if count < capacity:
                        out_a[count] = a
                        out_b[count] = ordered[j]
                    count += 1
        start = end
    return count


@numba.njit(cache=True, nogil=True)
def pairs_across_buckets(
    query: np.ndarray,
    reference: np.ndarray,
    sorted_bits: int,
    key_bits: int,
    earlier: np.ndarray,
    threshold: int,
    out_a: np.ndarray,
    out_b: np.ndarray,
) -> int:
    """Like :func:`pairs_in_buckets` for (query value, reference value) pairs: both arrays are
    sorted by their top ``sorted_bits`` bits and walked together bucket by bucket."""
    count = 0
    capacity = out_a.size
    sorted_shift = np.uint64(64 - sorted_bits)
    key_shift = np.uint64(64 - key_bits)
    q, r = 0, 0
    while q < query.size and r < reference.size:
        q_bucket = query[q] >> sorted_shift
        r_bucket = reference[r] >> sorted_shift
        if q_bucket < r_bucket:
            q += 1
        elif r_bucket < q_bucket:
            r += 1
        else:
            q_end, r_end = q + 1, r + 1
            while q_end < query.size and query[q_end] >> sorted_shift == q_bucket:
                q_end += 1
            while r_end < reference.size and reference[r_end] >> sorted_shift == r_bucket:
                r_end += 1
            for i in range(q, q_end):
                a = query[i]
                if _within(a, reference, r, r_end, threshold) == 0:
                    continue
                for j in range(r, r_end):
                    diff = a ^ reference[j]
                    if diff >> key_shift == _ZERO and _reported_here(diff, threshold, earlier):
                        if count < capacity:
                            out_a[count] = a
                            out_b[count] = reference[j]
                        count += 1
            q, r = q_end, r_end
    return count


@numba.njit(cache=True, nogil=True)
def pairs_under_prefix(
    ordered: np.ndarray,
    prefix_bits: int,
    shifts: np.ndarray,
    chunk_bits: np.ndarray,
    earlier: np.ndarray,
    earlier_counts: np.ndarray,
    threshold: int,
    local: np.ndarray,
    counts: np.ndarray,
    out_a: np.ndarray,
    out_b: np.ndarray,
) -> int:
    """:func:`pairs_in_buckets` for every key of a prefix group at once: ``ordered`` is
    sorted by the top ``prefix_bits`` (the keys' shared chunks), and each bucket of equal
    prefix, a few thousand values that stay in cache, is split by each key's last chunk
    (``shifts[t]``, ``chunk_bits[t]`` bits) with a counting sort into ``local`` (at least as
    long as the largest bucket; ``counts``: ``2**max(chunk_bits) + 1`` slots), then scanned as
    :func:`pairs_in_buckets` scans a bucket. One global sort serves all the group's keys
    instead of one each. Returns the number of pairs (see :func:`pairs_in_buckets`)."""
    count = 0
    capacity = out_a.size
    prefix_shift = np.uint64(64 - prefix_bits)
    n = ordered.size
    start = 0
    while start < n:
        top = ordered[start] >> prefix_shift
        end = start + 1
        while end < n and ordered[end] >> prefix_shift == top:
            end += 1
        if end - start > 1:
            for t in range(shifts.size):
                shift = np.uint64(shifts[t])
                values = 1 << chunk_bits[t]
                mask = np.uint64(values - 1)
                for d in range(values + 1):
                    counts[d] = 0
                for i in range(start, end):
                    counts[((ordered[i] >> shift) & mask) + np.uint64(1)] += 1
                for d in range(values):
                    counts[d + 1] += counts[d]
                for i in range(start, end):
                    value = ordered[i]
                    d = (value >> shift) & mask
                    local[counts[d]] = value
                    counts[d] += 1
                marks = earlier[t, : earlier_counts[t]]
                low = 0
                for d in range(values):  # counts[d]: the end of the values whose chunk is d
                    high = counts[d]
                    for i in range(low, high - 1):
                        a = local[i]
                        if _within(a, local, i + 1, high, threshold) == 0:
                            continue
                        for j in range(i + 1, high):
                            diff = a ^ local[j]
                            if _reported_here(diff, threshold, marks):
                                # written out as in pairs_in_buckets, on purpose (see there)
                                if count < capacity:
                                    out_a[count] = a
                                    out_b[count] = local[j]
                                count += 1
                    low = high
        start = end
    return count
