"""Legacy MMNeedle samples: the original scripts' random stream, flaws included.

Replays ``sample_single_needle.py`` / ``sample_multiple_needles.py``: ``random.seed(seed)`` per
config; M=1 uses the i-th stitched image; M>1 draws ``random.sample`` of M stitched images;
positives draw slots with ``randint`` (distinct while possible); negatives ``random.choice``
from all candidates not in the haystack. Captions are each image's last listed one.
The flaws are measured, not fixed: see :func:`legacy_report`.
"""

from __future__ import annotations

import bisect
import random
from collections import Counter
from collections.abc import Sequence

import numpy as np

from benchsmith.builders.mmneedle.candidates import Candidates
from benchsmith.builders.mmneedle.config import Setting
from benchsmith.builders.mmneedle.drafts import ABSENT, PlannedSamples, is_positive_id
from benchsmith.core.errors import PlanError


class _ExcludingView(Sequence):
    """``[c for c in range(n) if c not in excluded]`` without building the list.

    ``random.choice`` only needs ``len`` and indexing, so the stream is identical to the
    original's list comprehension while each draw costs O(log k) instead of O(n).
    """

    def __init__(self, n: int, excluded: set[int]):
        self._n = n
        self._excluded = sorted(excluded)

    def __len__(self) -> int:
        return self._n - len(self._excluded)

    def __getitem__(self, k: int) -> int:  # type: ignore[override]
        value = k
        while True:  # smallest value with value - (#excluded <= value) == k and value not excluded
            shift = bisect.bisect_right(self._excluded, value)
            candidate = k + shift
            if candidate == value:
                return value
            value = candidate


def legacy_samples(
    setting: Setting, pool: np.ndarray, cands: Candidates, n_samples: int, seed: int, stats: Counter
) -> PlannedSamples:
    stream = random.Random(seed)
    pool_size = len(pool)
    if setting.num_images == 1 and n_samples > pool_size:
        raise PlanError(
            f"{setting.name}: legacy order uses stitched image i for sample i, but the pool has {pool_size} < {n_samples}",
            fix="raise pool_size to at least samples_per_config",
        )
    if setting.num_images > pool_size:
        raise PlanError(
            f"{setting.name}: a haystack of {setting.num_images} needs a pool of at least that many"
        )
    shape = (n_samples, setting.num_needles)
    haystacks = np.empty((n_samples, setting.num_images), dtype=np.int64)
    candidate, caption, slots = (np.empty(shape, dtype=np.int64) for _ in range(3))
    for sample_id in range(n_samples):
        if setting.num_images == 1:
            haystack = [sample_id]
        else:
            haystack = stream.sample(range(pool_size), setting.num_images)
        flat = [image for index in haystack for image in pool[index].tolist()]
        haystacks[sample_id] = haystack
        if is_positive_id(sample_id, n_samples):
            drawn: set[int] = set()
            for k in range(setting.num_needles):
                while True:
                    slot = stream.randint(0, setting.slots - 1)
                    if slot not in drawn or len(drawn) >= setting.slots:
                        drawn.add(slot)
                        break
                image = flat[slot]
                candidate[sample_id, k] = image
                caption[sample_id, k] = len(cands.captions[image]) - 1
                slots[sample_id, k] = slot
        else:
            view = _ExcludingView(len(cands), set(flat))
            if len(view) < setting.num_needles:
                raise PlanError(
                    f"{setting.name}: too few images outside the haystack for {setting.num_needles} negatives"
                )
            chosen: set[int] = set()
            for k in range(setting.num_needles):
                while True:
                    image = stream.choice(view)
                    if image not in chosen:
                        chosen.add(image)
                        break
                candidate[sample_id, k] = image
                caption[sample_id, k] = len(cands.captions[image]) - 1
                slots[sample_id, k] = ABSENT
    return PlannedSamples(haystacks, candidate, caption, slots)
