"""Canonical MMNeedle samples: order-independent, and free of the original's flaws.

Guarantees (each sample draws from its own generator seeded by (seed, config, sample id)):

* no COCO image appears twice within one haystack (stitched images are chosen disjoint);
* the needles of a sample are distinct images;
* a positive needle's caption matches no caption of any *other* image in the haystack
  (otherwise another slot is drawn; samples where no slot qualifies are counted);
* a negative's caption never equals (after whitespace/case normalisation) any caption of any
  image in its haystack, and the negatives of one sample have distinct captions.

When a positive sample asks for more needles than the haystack has slots (M=1, N=2, K=5), the
original repeats a slot, which makes the gold answer ambiguous. Here the extra needles are
absent ones (drawn like negatives, gold ``-1``) mixed in at seeded positions.

How each sample is drawn (the calls on its generator, in this order):

1. M > 1: up to 20 greedy passes over ``permutation(pool_size)``, taking each stitched image
   that shares no COCO image with those already taken (M = 1: stitched image
   ``permutation(pool_size)[sample_id % pool_size]`` from one generator per grid instead).
2. positive: slots in ``permutation(slots)`` order; per slot the image's captions in
   ``permutation(n_captions)`` order (no draw for one caption); the first caption whose text
   no other image of the haystack has makes the needle. Slots without one are fallbacks, used
   (and counted) only when too few slots qualify.
3. absent needles: ``integers(0, n_candidates, 200)`` images tried in order (then a full
   ``permutation(n_candidates)`` for tiny sources), each outside the haystack taking its
   first caption in ``permutation(n_captions)`` order whose text is not yet taken.
4. positive with absent extras: the K needles in ``permutation(K)`` order.

The loop itself runs compiled (:mod:`benchsmith.builders.mmneedle.canonical_kernel`) with the
same draws, so a plan is byte-identical to the one the original Python loop produced.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from benchsmith.builders.mmneedle import canonical_kernel as kernel
from benchsmith.builders.mmneedle.candidates import Candidates
from benchsmith.builders.mmneedle.config import Setting
from benchsmith.builders.mmneedle.drafts import PlannedSamples
from benchsmith.builders.mmneedle.pools import FAMILY
from benchsmith.builders.mmneedle.rng_kernel import entropy_words
from benchsmith.core.errors import PlanError
from benchsmith.core.hashing import stable_int
from benchsmith.core.rng import derived_rng

NEGATIVE_DRAW_ATTEMPTS = 200
HAYSTACK_ATTEMPTS = 20


def canonical_samples(
    setting: Setting, pool: np.ndarray, cands: Candidates, n_samples: int, seed: int, stats: Counter
) -> PlannedSamples:
    if len(cands) > 2**32:
        raise PlanError(f"{len(cands)} candidate images: the sampler draws 32-bit indices")
    m1_order = (
        derived_rng(seed, FAMILY, f"haystacks_m1_n{setting.grid}").permutation(len(pool))
        if setting.num_images == 1
        else np.empty(0, dtype=np.int64)
    )
    shape = (n_samples, setting.num_needles)
    haystack = np.empty((n_samples, setting.num_images), dtype=np.int64)
    candidate, caption, slot = (np.empty(shape, dtype=np.int64) for _ in range(3))
    counters = np.zeros(2, dtype=np.int64)
    status, failed = kernel.canonical_config(
        entropy_words(seed, stable_int(FAMILY), stable_int(setting.name)),
        n_samples,
        setting.num_images,
        setting.num_needles,
        np.ascontiguousarray(pool, dtype=np.int64),
        m1_order.astype(np.int64),
        cands.caption_offsets,
        cands.norm_ids,
        cands.image_norm_offsets,
        cands.image_norms,
        cands.n_norms,
        HAYSTACK_ATTEMPTS,
        NEGATIVE_DRAW_ATTEMPTS,
        haystack,
        candidate,
        caption,
        slot,
        counters,
    )
    if status == kernel.NO_DISJOINT_HAYSTACK:
        raise PlanError(
            f"{setting.name}: cannot find {setting.num_images} stitched images without a shared COCO image in a pool of {len(pool)} (sample {failed})",
            fix="raise the pool size (mmneedle.sizes.<profile>.pool_size) or use more source images",
        )
    if status == kernel.TOO_FEW_ABSENT:
        raise PlanError(
            f"{setting.name}: not enough COCO images outside a haystack with a caption unlike every haystack caption (sample {failed})",
            fix="use more source images or smaller haystacks",
        )
    if counters[kernel.STAT_AMBIGUOUS]:
        stats["positive_caption_ambiguous"] += int(counters[kernel.STAT_AMBIGUOUS])
    if counters[kernel.STAT_MADE_ABSENT]:
        stats["positive_needles_made_absent"] += int(counters[kernel.STAT_MADE_ABSENT])
    return PlannedSamples(haystack, candidate, caption, slot)
