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
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from benchsmith.builders.mmneedle.candidates import Candidates
from benchsmith.builders.mmneedle.config import Setting
from benchsmith.builders.mmneedle.drafts import (
    NeedleDraft,
    SampleDraft,
    is_positive_id,
    slot_location,
)
from benchsmith.builders.mmneedle.pools import FAMILY
from benchsmith.core.errors import PlanError
from benchsmith.core.rng import derived_rng
from benchsmith.sources.coco.reader import normalize_caption

NEGATIVE_DRAW_ATTEMPTS = 200
HAYSTACK_ATTEMPTS = 20


def _disjoint_haystack(
    pool: np.ndarray, num_images: int, rng: np.random.Generator, setting: Setting
) -> list[int]:
    """Greedy draw of stitched images sharing no COCO image, restarted a few times.

    A greedy pass can paint itself into a corner on small pools (a first pick from a short last
    pass conflicts with everything else), so it restarts from fresh seeded orders before
    declaring the pool too small.
    """
    for _ in range(HAYSTACK_ATTEMPTS):
        chosen: list[int] = []
        used: set[int] = set()
        for index in rng.permutation(len(pool)):
            cells = pool[index].tolist()
            if used.isdisjoint(cells):
                chosen.append(int(index))
                used.update(cells)
                if len(chosen) == num_images:
                    return chosen
    raise PlanError(
        f"{setting.name}: cannot find {num_images} stitched images without a shared COCO image in a pool of {len(pool)}",
        fix="raise the pool size (mmneedle.sizes.<profile>.pool_size) or use more source images",
    )


def _caption_order(rng: np.random.Generator, n: int) -> list[int]:
    return rng.permutation(n).tolist() if n > 1 else [0]


def _positive_needles(
    flat: list[int], cands: Candidates, setting: Setting, rng: np.random.Generator, stats: Counter
) -> list[NeedleDraft]:
    counts: Counter = Counter()
    for image in flat:
        counts.update(cands.norms[image])
    wanted = min(setting.num_needles, len(flat))
    needles: list[NeedleDraft] = []
    fallback: list[NeedleDraft] = []
    for slot in rng.permutation(len(flat)).tolist():
        image = flat[slot]
        captions = cands.captions[image]
        order = _caption_order(rng, len(captions))
        unique = [i for i in order if counts[_norm(cands, image, i)] == 1]
        if unique:
            needles.append(NeedleDraft(image, unique[0], slot_location(slot, setting.grid)))
        elif len(fallback) < wanted:
            fallback.append(NeedleDraft(image, order[0], slot_location(slot, setting.grid)))
        if len(needles) == wanted:
            return needles
    stats["positive_caption_ambiguous"] += 1
    return (needles + fallback)[:wanted]


def _norm(cands: Candidates, image: int, caption_index: int) -> str:
    return normalize_caption(cands.captions[image][caption_index].caption)


def _absent_needles(
    flat: list[int],
    cands: Candidates,
    setting: Setting,
    rng: np.random.Generator,
    count: int,
    present: list[NeedleDraft] = (),
) -> list[NeedleDraft]:
    """``count`` distinct images outside the haystack whose captions match nothing in it."""
    in_haystack = set(flat)
    taken_norms: set[str] = set().union(*(cands.norms[image] for image in in_haystack))
    taken_norms.update(_norm(cands, n.candidate, n.caption_index) for n in present)
    needles: list[NeedleDraft] = []
    if count == 0:
        return needles

    def try_image(image: int) -> None:
        if image in in_haystack:
            return
        for i in _caption_order(rng, len(cands.captions[image])):
            norm = _norm(cands, image, i)
            if norm not in taken_norms:
                needles.append(NeedleDraft(image, i, None))
                in_haystack.add(image)
                taken_norms.add(norm)
                return

    for image in rng.integers(0, len(cands), size=NEGATIVE_DRAW_ATTEMPTS).tolist():
        try_image(image)
        if len(needles) == count:
            return needles
    for image in rng.permutation(len(cands)).tolist():  # exhaustive fallback for tiny sources
        try_image(image)
        if len(needles) == count:
            return needles
    raise PlanError(
        f"{setting.name}: not enough COCO images outside a haystack with a caption unlike every haystack caption",
        fix="use more source images or smaller haystacks",
    )


def canonical_samples(
    setting: Setting, pool: np.ndarray, cands: Candidates, n_samples: int, seed: int, stats: Counter
) -> list[SampleDraft]:
    m1_order = (
        derived_rng(seed, FAMILY, f"haystacks_m1_n{setting.grid}").permutation(len(pool))
        if setting.num_images == 1
        else None
    )
    drafts = []
    for sample_id in range(n_samples):
        rng = derived_rng(seed, FAMILY, setting.name, sample_id)
        if m1_order is not None:
            haystack = [int(m1_order[sample_id % len(pool)])]
        else:
            haystack = _disjoint_haystack(pool, setting.num_images, rng, setting)
        flat = [image for index in haystack for image in pool[index].tolist()]
        positive = is_positive_id(sample_id, n_samples)
        if positive:
            needles = _positive_needles(flat, cands, setting, rng, stats)
            extra = setting.num_needles - len(needles)
            if extra:
                stats["positive_needles_made_absent"] += extra
                needles += _absent_needles(flat, cands, setting, rng, extra, needles)
                needles = [needles[i] for i in rng.permutation(len(needles)).tolist()]
        else:
            needles = _absent_needles(flat, cands, setting, rng, setting.num_needles)
        drafts.append(SampleDraft(sample_id, tuple(haystack), positive, tuple(needles)))
    return drafts
