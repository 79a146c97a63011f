"""The canonical MMNeedle planner and row builder in plain Python, one sample at a time.

This is the form in which the rules were first written, before the per-sample loop was
compiled (``canonical_kernel``) and the rows built as columns (``plan.sample_frame``). It is
slow (about 3 minutes for a full plan) and obviously follows the rules in
``builders/mmneedle/canonical.py``: sets, counters and NumPy's own generator. Tests and the
plan benchmark compare the fast path with it sample for sample and byte for byte.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from benchsmith.builders.mmneedle.candidates import Candidates
from benchsmith.builders.mmneedle.canonical import HAYSTACK_ATTEMPTS, NEGATIVE_DRAW_ATTEMPTS
from benchsmith.builders.mmneedle.config import Setting
from benchsmith.builders.mmneedle.drafts import (
    ABSENT,
    PlannedSamples,
    in_paper_eval_subset,
    is_positive_id,
    slot_location,
)
from benchsmith.builders.mmneedle.pools import FAMILY, stitched_id
from benchsmith.builders.mmneedle.prompt import build_prompt, gold_answer
from benchsmith.core.errors import PlanError
from benchsmith.core.rng import derived_rng
from benchsmith.sources.coco.reader import clean_caption, normalize_caption


def _norm(cands: Candidates, image: int, caption: int) -> str:
    return normalize_caption(cands.captions[image][caption].caption)


def _norms(cands: Candidates, image: int) -> frozenset[str]:
    return frozenset(normalize_caption(c.caption) for c in cands.captions[image])


def _caption_order(rng: np.random.Generator, n: int) -> list[int]:
    return rng.permutation(n).tolist() if n > 1 else [0]


def _disjoint_haystack(pool, num_images, rng) -> list[int]:
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
    raise PlanError("no disjoint haystack")


def _positive_needles(flat, cands, setting, rng, stats) -> list[tuple[int, int, int]]:
    counts: Counter = Counter()
    for image in flat:
        counts.update(_norms(cands, image))
    wanted = min(setting.num_needles, len(flat))
    needles, fallback = [], []
    for slot in rng.permutation(len(flat)).tolist():
        image = flat[slot]
        order = _caption_order(rng, len(cands.captions[image]))
        unique = [i for i in order if counts[_norm(cands, image, i)] == 1]
        if unique:
            needles.append((image, unique[0], slot))
        elif len(fallback) < wanted:
            fallback.append((image, order[0], slot))
        if len(needles) == wanted:
            return needles
    stats["positive_caption_ambiguous"] += 1
    return (needles + fallback)[:wanted]


def _absent_needles(flat, cands, rng, count, present, stats) -> list[tuple[int, int, int]]:
    in_haystack = set(flat)
    taken: set[str] = set().union(*(_norms(cands, image) for image in in_haystack))
    taken.update(_norm(cands, image, caption) for image, caption, _ in present)
    needles: list[tuple[int, int, int]] = []
    if count == 0:
        return needles

    def try_image(image: int) -> None:
        if image in in_haystack:
            return
        for i in _caption_order(rng, len(cands.captions[image])):
            if _norm(cands, image, i) not in taken:
                needles.append((image, i, ABSENT))
                in_haystack.add(image)
                taken.add(_norm(cands, image, i))
                return

    for image in rng.integers(0, len(cands), size=NEGATIVE_DRAW_ATTEMPTS).tolist():
        try_image(image)
        if len(needles) == count:
            return needles
    stats["exhaustive_fallback"] += 1
    for image in rng.permutation(len(cands)).tolist():
        try_image(image)
        if len(needles) == count:
            return needles
    raise PlanError("too few absent needles")


def reference_sample(setting: Setting, pool, cands, sample_id, n_samples, seed, stats):
    """(haystack, needles as (candidate, caption, slot)) of one canonical sample."""
    rng = derived_rng(seed, FAMILY, setting.name, sample_id)
    if setting.num_images == 1:
        order = derived_rng(seed, FAMILY, f"haystacks_m1_n{setting.grid}").permutation(len(pool))
        haystack = [int(order[sample_id % len(pool)])]
    else:
        haystack = _disjoint_haystack(pool, setting.num_images, rng)
    flat = [image for index in haystack for image in pool[index].tolist()]
    if is_positive_id(sample_id, n_samples):
        needles = _positive_needles(flat, cands, setting, rng, stats)
        extra = setting.num_needles - len(needles)
        if extra:
            stats["positive_needles_made_absent"] += extra
            needles += _absent_needles(flat, cands, rng, extra, needles, stats)
            needles = [needles[i] for i in rng.permutation(len(needles)).tolist()]
    else:
        needles = _absent_needles(flat, cands, rng, setting.num_needles, [], stats)
    return haystack, needles


def reference_samples(setting, pool, cands, n_samples, seed, stats) -> PlannedSamples:
    drafted = [
        reference_sample(setting, pool, cands, s, n_samples, seed, stats) for s in range(n_samples)
    ]
    needles = np.asarray([needles for _, needles in drafted], dtype=np.int64)
    return PlannedSamples(
        np.asarray([haystack for haystack, _ in drafted], dtype=np.int64),
        needles[:, :, 0],
        needles[:, :, 1],
        needles[:, :, 2],
    )


def reference_pool_rows(plan, grid: int) -> list[dict[str, Any]]:
    images = plan.candidates.images
    return [
        {
            "stitched_id": stitched_id(grid, index),
            "grid": grid,
            "cells": [
                {
                    "row": k // grid + 1,
                    "col": k % grid + 1,
                    "coco_image_id": images[c].image_id,
                    "file_name": images[c].file_name,
                }
                for k, c in enumerate(cells)
            ],
        }
        for index, cells in enumerate(plan.pools[grid].tolist())
    ]


def reference_sample_rows(plan, setting: Setting) -> list[dict[str, Any]]:
    cands = plan.candidates
    samples = plan.samples[setting.name]
    pool = plan.pools[setting.grid]
    legacy = plan.config.order == "legacy"
    picture = plan.picture_index().tolist()
    rows = []
    for sample_id in range(len(samples)):
        haystack = samples.haystack[sample_id].tolist()
        flat = Counter(image for index in haystack for image in pool[index].tolist())
        shown = Counter(picture[image] for image in flat.elements())
        needles, locations = [], []
        for image, caption_index, slot in zip(
            samples.candidate[sample_id].tolist(),
            samples.caption[sample_id].tolist(),
            samples.slot[sample_id].tolist(),
            strict=True,
        ):
            caption = cands.captions[image][caption_index]
            loc = None if slot == ABSENT else slot_location(slot, setting.grid)
            locations.append(loc)
            needles.append(
                {
                    "caption": caption.caption if legacy else clean_caption(caption.caption),
                    "caption_id": caption.annotation_id,
                    "coco_image_id": cands.images[image].image_id,
                    "image_index": loc[0] if loc else None,
                    "row": loc[1] if loc else None,
                    "col": loc[2] if loc else None,
                }
            )
        rows.append(
            {
                "sample_id": sample_id,
                "num_images": setting.num_images,
                "grid": setting.grid,
                "num_needles": setting.num_needles,
                "haystack": [stitched_id(setting.grid, index) for index in haystack],
                "is_positive": bool(is_positive_id(sample_id, len(samples))),
                "needles": needles,
                "gold_answer": gold_answer(locations),
                "prompt": build_prompt(
                    setting.num_images, setting.grid, [n["caption"] for n in needles]
                ),
                "paper_eval_subset": bool(
                    in_paper_eval_subset(sample_id, len(samples), setting.num_needles)
                ),
                "haystack_has_duplicate_image": sum(shown.values()) > len(shown),
                "ambiguous_needles": sum(
                    1
                    for image, loc in zip(
                        samples.candidate[sample_id].tolist(), locations, strict=True
                    )
                    if loc is not None and flat[image] > 1
                ),
                "needles_with_twin_in_haystack": sum(
                    1
                    for image in samples.candidate[sample_id].tolist()
                    if any(picture[i] == picture[image] and i != image for i in flat)
                ),
            }
        )
    return rows
