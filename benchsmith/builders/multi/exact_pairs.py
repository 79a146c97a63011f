"""Every pair of gram sets at Jaccard >= t, exactly: prefix-filter candidates, compiled check.

MinHash LSH finds a pair at Jaccard 0.6 with probability 0.99, so one in a hundred true
duplicates can slip through. Prefix filtering (Chaudhuri et al. 2006; Bayardo et al.'s AllPairs
2007) misses none, and on exam text it is also faster than LSH and than the exact sparse
all-pairs product (``bench/multi_near_dups.py`` measures the three side by side):

* order every gram by how many sets hold it, rarest first (ties by value), and sort each set
  in that order;
* if ``J(x, y) >= t`` then ``|x & y| >= t * |x|``, so the first ``|x| - ceil(t |x|) + 1``
  grams of ``x`` (its *prefix*) share a gram with ``y``'s prefix: the candidates are the pairs
  whose prefixes meet, and since prefixes hold the rare grams, the shared templates of exam
  questions ("下列说法正确的是", option letters, formulas) rarely make a pair;
* a pair is kept only when the sizes allow ``t`` (``t |y| <= |x|``), then its exact
  intersection is counted from the set x gram incidence matrix (the two rows multiplied
  element-wise, scipy).

The result is the exact set of pairs at or above ``t``; :func:`exact_similar_pairs` returns them
with their Jaccard. Empty sets meet nothing here (their Jaccard is undefined; the caller decides
what two empty texts are). ``t <= 0`` would make every pair a candidate and is refused.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

_EPSILON = 1e-9  # ceil(t * s) rounded down on float noise: a longer prefix is only safer


def prefix_lengths(sizes: np.ndarray, threshold: float) -> np.ndarray:
    """How many of its rarest grams a set of each size must show (0 for an empty set)."""
    needed = np.ceil(threshold * sizes - _EPSILON).astype(np.int64)
    return np.where(sizes > 0, np.minimum(sizes, sizes - needed + 1), 0)


def _pairs_within_groups(
    members: np.ndarray, group_starts: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Every (left, right) of ``members`` inside each group (``members`` sorted per group)."""
    sizes = np.diff(np.r_[group_starts, members.size])
    group_of = np.repeat(np.arange(sizes.size), sizes)
    position = np.arange(members.size) - group_starts[group_of]
    partners = sizes[group_of] - 1 - position  # later members of the same group
    left = np.repeat(np.arange(members.size), partners)
    run_start = np.repeat(np.cumsum(partners) - partners, partners)
    right = left + 1 + (np.arange(left.size) - run_start)
    return members[left], members[right]


def prefix_candidates(sets: Sequence[np.ndarray], threshold: float) -> np.ndarray:
    """Distinct pairs (i < j) whose prefixes share a gram and whose sizes allow ``threshold``,
    as a (k, 2) array: a superset of the pairs at Jaccard >= ``threshold``."""
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    n = len(sets)
    sizes = np.array([s.size for s in sets], dtype=np.int64)
    if n < 2 or not sizes.sum():
        return np.zeros((0, 2), dtype=np.int64)
    owners = np.repeat(np.arange(n), sizes)
    values = np.concatenate(sets)
    vocabulary, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    rank = np.empty(vocabulary.size, dtype=np.int64)
    rank[np.lexsort((vocabulary, counts))] = np.arange(vocabulary.size)  # rarest first
    ranks = rank[inverse]
    order = np.lexsort((ranks, owners))  # each set's grams, rarest first
    starts = np.r_[0, np.cumsum(sizes)[:-1]]
    position = np.arange(order.size) - starts[owners[order]]
    keep = order[position < prefix_lengths(sizes, threshold)[owners[order]]]
    kept_ranks, kept_owners = ranks[keep], owners[keep]
    by_gram = np.lexsort((kept_owners, kept_ranks))
    kept_ranks, kept_owners = kept_ranks[by_gram], kept_owners[by_gram]
    group_starts = np.flatnonzero(np.r_[True, kept_ranks[1:] != kept_ranks[:-1]])
    left, right = _pairs_within_groups(kept_owners, group_starts)
    small, large = np.minimum(sizes[left], sizes[right]), np.maximum(sizes[left], sizes[right])
    fits = small >= np.ceil(threshold * large - _EPSILON)
    codes = np.unique(left[fits] * n + right[fits])
    return np.stack([codes // n, codes % n], axis=1)


_CHUNK = 1 << 17  # candidate pairs whose rows are gathered at a time


def intersection_sizes(sets: Sequence[np.ndarray], pairs: np.ndarray) -> np.ndarray:
    """``|sets[i] & sets[j]|`` for each row ``(i, j)`` of ``pairs``: the two sets' rows of
    the set x gram incidence matrix gathered and multiplied element-wise (scipy, in C)."""
    from scipy import sparse

    sizes = np.array([s.size for s in sets], dtype=np.int64)
    if not len(pairs) or not sizes.sum():
        return np.zeros(len(pairs), dtype=np.int64)
    _, columns = np.unique(np.concatenate(sets), return_inverse=True)
    pointers = np.r_[0, np.cumsum(sizes)]
    incidence = sparse.csr_matrix(
        (np.ones(columns.size, dtype=np.int32), columns, pointers),
        shape=(len(sets), int(columns.max()) + 1),
    )
    out = np.empty(len(pairs), dtype=np.int64)
    for begin in range(0, len(pairs), _CHUNK):
        part = pairs[begin : begin + _CHUNK]
        common = incidence[part[:, 0]].multiply(incidence[part[:, 1]]).sum(axis=1)
        out[begin : begin + len(part)] = np.asarray(common).ravel()
    return out


def exact_similar_pairs(
    sets: Sequence[np.ndarray], threshold: float
) -> tuple[np.ndarray, np.ndarray, int]:
    """(pairs (k, 2) with i < j, their Jaccard, the number of candidates checked): every pair
    of ``sets`` at Jaccard >= ``threshold``, none missed."""
    candidates = prefix_candidates(sets, threshold)
    if not len(candidates):
        return candidates, np.zeros(0), 0
    common = intersection_sizes(sets, candidates)
    sizes = np.array([s.size for s in sets], dtype=np.int64)
    union = sizes[candidates[:, 0]] + sizes[candidates[:, 1]] - common
    similarity = common / np.maximum(union, 1)
    keep = similarity >= threshold  # the same division and comparison as near_dups.jaccard
    return candidates[keep], similarity[keep], len(candidates)
