"""The canonical sampler's per-sample loop, compiled: same draws, same samples, ~50x faster.

:mod:`benchsmith.builders.mmneedle.canonical` states the rules (disjoint haystacks, unambiguous
positive captions, negatives whose captions match nothing in the haystack). This module applies
them to one config in a single compiled loop over samples. Each sample still draws from its own
generator, ``derived_rng(seed, "mmneedle", config, sample_id)``, replayed bit for bit by
:mod:`benchsmith.builders.mmneedle.rng_kernel`, and makes the same calls in the same order as the Python
version it replaced, so plans are byte-identical to the ones built before.

Captions are compared as integer ids of their normalised text (``Candidates.norm_ids``); the
sets and counters of the Python version become flag and count arrays over those ids, reset
after each sample by walking what was set.

Status codes: 0 done; 1 no disjoint haystack after the attempts; 2 too few absent needles.
"""

from __future__ import annotations

import numba
import numpy as np

from benchsmith.builders.mmneedle.rng_kernel import (
    STATE_WORDS,
    integers_into,
    permutation_into,
    seed_state,
)
from benchsmith.core.jit import ready_numba

ready_numba()  # before the first kernel: see benchsmith.core.jit

OK = 0
NO_DISJOINT_HAYSTACK = 1
TOO_FEW_ABSENT = 2

STAT_AMBIGUOUS = 0  # positives with fewer unambiguous slots than needles
STAT_MADE_ABSENT = 1  # needles beyond the haystack's slots, drawn absent instead


@numba.njit(cache=True, nogil=True)
def _disjoint_haystack(state, pool, num_images, attempts, order, used, out) -> bool:
    """Greedy draw of ``num_images`` pool rows sharing no image; restarts ``attempts`` times."""
    pool_size, cells = pool.shape
    for _ in range(attempts):
        permutation_into(state, pool_size, order)
        chosen = 0
        for k in range(pool_size):
            index = order[k]
            free = True
            for c in range(cells):
                if used[pool[index, c]]:
                    free = False
                    break
            if free:
                out[chosen] = index
                chosen += 1
                for c in range(cells):
                    used[pool[index, c]] = True
                if chosen == num_images:
                    break
        for k in range(chosen):  # reset the flags this attempt set
            for c in range(cells):
                used[pool[out[k], c]] = False
        if chosen == num_images:
            return True
    return False


@numba.njit(cache=True, nogil=True)
def _caption_order(state, n, out) -> None:
    if n > 1:
        permutation_into(state, n, out)
    else:
        out[0] = 0


@numba.njit(cache=True, nogil=True)
def _try_absent(
    state, image, cap_offsets, cap_norms, in_haystack, taken, taken_list, n_taken, order
) -> tuple:
    """Caption index of ``image`` as an absent needle (-1: in the haystack or no free caption),
    and the new length of ``taken_list``."""
    if in_haystack[image]:
        return -1, n_taken
    first = cap_offsets[image]
    _caption_order(state, cap_offsets[image + 1] - first, order)
    for k in range(cap_offsets[image + 1] - first):
        norm = cap_norms[first + order[k]]
        if not taken[norm]:
            in_haystack[image] = True
            taken[norm] = True
            taken_list[n_taken] = norm
            return order[k], n_taken + 1
    return -1, n_taken


@numba.njit(cache=True, nogil=True)
def _absent_needles(
    state,
    flat,
    count,
    first_out,
    out_candidate,
    out_caption,
    cap_offsets,
    cap_norms,
    image_norm_offsets,
    image_norms,
    in_haystack,
    taken,
    taken_list,
    scratch,
    draws,
    everyone,
) -> bool:
    """Fill needles ``first_out .. first_out + count`` with absent images; the needles before
    ``first_out`` are present ones whose captions count as taken. Leaves the flags cleared.

    ``everyone`` (one slot per candidate) is allocated once by the caller: allocated here, even
    in the branch that rarely runs, it cost 25 us per sample (a 300 KB block is mmap'ed)."""
    n_candidates = cap_offsets.size - 1
    n_taken = 0
    for image in flat:
        in_haystack[image] = True
        for k in range(image_norm_offsets[image], image_norm_offsets[image + 1]):
            if not taken[image_norms[k]]:
                taken[image_norms[k]] = True
                taken_list[n_taken] = image_norms[k]
                n_taken += 1
    for k in range(first_out):
        norm = cap_norms[cap_offsets[out_candidate[k]] + out_caption[k]]
        if not taken[norm]:
            taken[norm] = True
            taken_list[n_taken] = norm
            n_taken += 1
    made = 0
    if count > 0:
        integers_into(state, n_candidates, draws.size, draws)
        for d in range(draws.size):
            caption, n_taken = _try_absent(
                state, draws[d], cap_offsets, cap_norms, in_haystack, taken, taken_list, n_taken,
                scratch,
            )  # fmt: skip
            if caption >= 0:
                out_candidate[first_out + made] = draws[d]
                out_caption[first_out + made] = caption
                made += 1
                if made == count:
                    break
        if made < count:  # exhaustive fallback for tiny sources
            permutation_into(state, n_candidates, everyone)
            for d in range(n_candidates):
                caption, n_taken = _try_absent(
                    state, everyone[d], cap_offsets, cap_norms, in_haystack, taken, taken_list,
                    n_taken, scratch,
                )  # fmt: skip
                if caption >= 0:
                    out_candidate[first_out + made] = everyone[d]
                    out_caption[first_out + made] = caption
                    made += 1
                    if made == count:
                        break
    for image in flat:
        in_haystack[image] = False
    for k in range(first_out, first_out + made):
        in_haystack[out_candidate[k]] = False
    for k in range(n_taken):
        taken[taken_list[k]] = False
    return made == count


@numba.njit(cache=True, nogil=True)
def canonical_config(
    prefix_words,
    n_samples,
    num_images,
    num_needles,
    pool,
    m1_order,
    cap_offsets,
    cap_norms,
    image_norm_offsets,
    image_norms,
    n_norms,
    haystack_attempts,
    negative_draws,
    out_haystack,
    out_candidate,
    out_caption,
    out_slot,
    stats,
) -> tuple:
    """Plan every sample of one config into the ``out_*`` arrays (slot -1: absent needle).

    Returns (status, sample id that failed or -1).
    """
    pool_size, cells = pool.shape
    n_candidates = cap_offsets.size - 1
    slots = num_images * cells
    max_captions = 1
    for image in range(n_candidates):
        max_captions = max(max_captions, cap_offsets[image + 1] - cap_offsets[image])
    state = np.empty(STATE_WORDS, np.uint64)
    words = np.empty(prefix_words.size + 2, np.uint64)
    words[: prefix_words.size] = prefix_words
    order = np.empty(max(pool_size, slots, num_needles), np.int64)
    caption_order = np.empty(max_captions, np.int64)
    used = np.zeros(n_candidates, np.bool_)
    in_haystack = np.zeros(n_candidates, np.bool_)
    counts = np.zeros(n_norms, np.int32)
    taken = np.zeros(n_norms, np.bool_)
    taken_list = np.empty(slots * max_captions + num_needles, np.int64)
    draws = np.empty(negative_draws, np.int64)
    everyone = np.empty(n_candidates, np.int64)
    flat = np.empty(slots, np.int64)
    fallback_candidate = np.empty(num_needles, np.int64)
    fallback_caption = np.empty(num_needles, np.int64)
    fallback_slot = np.empty(num_needles, np.int64)
    permuted = np.empty((3, num_needles), np.int64)
    positives = (n_samples + 1) // 2  # ids below n/2 are positive
    for sample in range(n_samples):
        n_words = prefix_words.size  # then the sample id's words, as SeedSequence splits ints
        if sample == 0:
            words[n_words] = np.uint64(0)
            n_words += 1
        value = sample
        while value > 0:
            words[n_words] = np.uint64(value & 0xFFFFFFFF)
            value >>= 32
            n_words += 1
        seed_state(words[:n_words], state)
        haystack = out_haystack[sample]
        if num_images == 1:
            haystack[0] = m1_order[sample % pool_size]
        elif not _disjoint_haystack(
            state, pool, num_images, haystack_attempts, order, used, haystack
        ):
            return NO_DISJOINT_HAYSTACK, sample
        for m in range(num_images):
            for c in range(cells):
                flat[m * cells + c] = pool[haystack[m], c]
        candidate, caption, slot = out_candidate[sample], out_caption[sample], out_slot[sample]
        slot[:] = -1
        if sample < positives:
            for image in flat:
                for k in range(image_norm_offsets[image], image_norm_offsets[image + 1]):
                    counts[image_norms[k]] += 1
            wanted = min(num_needles, slots)
            found = 0
            n_fallback = 0
            permutation_into(state, slots, order)
            for k in range(slots):
                image = flat[order[k]]
                first = cap_offsets[image]
                n_captions = cap_offsets[image + 1] - first
                _caption_order(state, n_captions, caption_order)
                unique = -1
                for i in range(n_captions):
                    if counts[cap_norms[first + caption_order[i]]] == 1:
                        unique = caption_order[i]
                        break
                if unique >= 0:
                    candidate[found], caption[found], slot[found] = image, unique, order[k]
                    found += 1
                elif n_fallback < wanted:
                    fallback_candidate[n_fallback] = image
                    fallback_caption[n_fallback] = caption_order[0]
                    fallback_slot[n_fallback] = order[k]
                    n_fallback += 1
                if found == wanted:
                    break
            for image in flat:
                for k in range(image_norm_offsets[image], image_norm_offsets[image + 1]):
                    counts[image_norms[k]] -= 1
            if found < wanted:
                stats[STAT_AMBIGUOUS] += 1
                for k in range(wanted - found):
                    candidate[found + k] = fallback_candidate[k]
                    caption[found + k] = fallback_caption[k]
                    slot[found + k] = fallback_slot[k]
            extra = num_needles - wanted
            if extra:
                stats[STAT_MADE_ABSENT] += extra
                if not _absent_needles(
                    state, flat, extra, wanted, candidate, caption, cap_offsets, cap_norms,
                    image_norm_offsets, image_norms, in_haystack, taken, taken_list,
                    caption_order, draws, everyone,
                ):  # fmt: skip
                    return TOO_FEW_ABSENT, sample
                permutation_into(state, num_needles, order)
                for k in range(num_needles):
                    permuted[0, k] = candidate[order[k]]
                    permuted[1, k] = caption[order[k]]
                    permuted[2, k] = slot[order[k]]
                candidate[:] = permuted[0]
                caption[:] = permuted[1]
                slot[:] = permuted[2]
        elif not _absent_needles(
            state, flat, num_needles, 0, candidate, caption, cap_offsets, cap_norms,
            image_norm_offsets, image_norms, in_haystack, taken, taken_list, caption_order,
            draws, everyone,
        ):  # fmt: skip
            return TOO_FEW_ABSENT, sample
    return OK, -1
