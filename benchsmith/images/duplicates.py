"""Duplicate images as leakage findings on keys: inside one sample, and across two splits.

* **exact**: equal ``pixel_sha256`` (same decoded pixels, whatever the file encoding).
* **near**: perceptual hashes within ``threshold`` bits (Hamming distance), pixels not equal.

A pair that is exact is reported once, as exact (its ``distance`` is the phash distance,
normally 0). Findings come sorted by their keys (sample id, then image positions; or query key,
then reference key), falling back to input order when keys of mixed types cannot be compared,
so the output never depends on hash-table order.

Flat images (``ImageHashes.low_information``) take part in exact matching only: their pHash
is noise, so comparing it would call every blank page a near duplicate of every other.

Suggested threshold: :data:`DEFAULT_PHASH_THRESHOLD` (8 of 64 bits). cleanvision flags near
duplicates only on *equal* phashes (distance 0), which misses lossy re-encodes that flip a few
bits; two unrelated images agree within 8 bits with probability ~2.5e-10 for uniformly random
hashes (about 5 chance pairs among 200,000 images), in practice more for look-alike photos.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from benchsmith.images.hashes import ImageHashes
from benchsmith.images.near_duplicates import (
    check_threshold,
    find_cross_matches,
    find_near_duplicate_pairs,
)

DEFAULT_PHASH_THRESHOLD = 8

Kind = Literal["exact", "near"]
Scope = Literal["within_sample", "within_split", "across_splits"]


@dataclass(frozen=True)
class DuplicateFinding:
    """Two images that are the same picture (``exact``) or look the same (``near``).

    ``within_sample``: ``a`` and ``b`` are image positions inside sample ``sample_id``.
    ``across_splits``: ``a`` is a query key, ``b`` a reference key, ``sample_id`` is None.
    """

    kind: Kind
    scope: Scope
    a: Hashable
    b: Hashable
    distance: int
    sample_id: str | None = None


def _phash_array(hashes: Sequence[ImageHashes]) -> np.ndarray:
    return np.array([h.phash for h in hashes], dtype=np.uint64)


def _pairs_within(
    hashes: Sequence[ImageHashes], threshold: int
) -> list[tuple[Kind, int, int, int]]:
    """(kind, i, j, distance) for i < j among one list of images."""
    found: dict[tuple[int, int], tuple[Kind, int]] = {}
    by_pixels: dict[str, list[int]] = defaultdict(list)
    for index, image in enumerate(hashes):
        by_pixels[image.pixel_sha256].append(index)
    for group in by_pixels.values():
        for n, i in enumerate(group):
            for j in group[n + 1 :]:
                distance = (hashes[i].phash ^ hashes[j].phash).bit_count()
                found[(i, j)] = ("exact", distance)
    structured = [i for i, image in enumerate(hashes) if not image.low_information]
    matches = find_near_duplicate_pairs(_phash_array([hashes[i] for i in structured]), threshold)
    for i, j, distance in zip(
        matches.left.tolist(), matches.right.tolist(), matches.distance.tolist(), strict=True
    ):
        a, b = sorted((structured[i], structured[j]))
        found.setdefault((a, b), ("near", distance))
    return [(kind, i, j, distance) for (i, j), (kind, distance) in sorted(found.items())]


def duplicates_within_samples(
    sample_images: Mapping[str, Sequence[ImageHashes]], threshold: int
) -> list[DuplicateFinding]:
    """Images repeated inside one sample (e.g. a haystack holding the same picture twice).

    Only pairs inside the same sample are compared: the same image in two different samples is
    normal (e.g. one COCO image reused across haystacks) and is not reported here.
    """
    threshold = check_threshold(threshold)
    findings = []
    for sample_id in _sorted_keys(sample_images):
        images = sample_images[sample_id]
        if len(images) < 2:
            continue
        for kind, i, j, distance in _pairs_within(images, threshold):
            findings.append(DuplicateFinding(kind, "within_sample", i, j, distance, sample_id))
    return findings


def duplicates_within(
    images: Mapping[Hashable, ImageHashes], threshold: int
) -> list[DuplicateFinding]:
    """Duplicate pairs among the images of one split (scope ``within_split``), keys a < b."""
    threshold = check_threshold(threshold)
    keys = _sorted_keys(images)
    pairs = _pairs_within([images[key] for key in keys], threshold)
    return [
        DuplicateFinding(kind, "within_split", keys[i], keys[j], distance)
        for kind, i, j, distance in pairs
    ]


def duplicates_across(
    query: Mapping[Hashable, ImageHashes],
    reference: Mapping[Hashable, ImageHashes],
    threshold: int,
) -> list[DuplicateFinding]:
    """Query images that also appear in the reference (support vs query, train vs test).

    Exact pairs come from a join on ``pixel_sha256``; near pairs from
    :func:`~benchsmith.images.near_duplicates.find_cross_matches` on the phashes, minus the
    exact ones. Sorted by (query key, reference key).
    """
    threshold = check_threshold(threshold)
    query_keys, reference_keys = _sorted_keys(query), _sorted_keys(reference)
    found: dict[tuple[int, int], tuple[Kind, int]] = {}
    reference_by_pixels: dict[str, list[int]] = defaultdict(list)
    for j, key in enumerate(reference_keys):
        reference_by_pixels[reference[key].pixel_sha256].append(j)
    for i, key in enumerate(query_keys):
        image = query[key]
        for j in reference_by_pixels.get(image.pixel_sha256, ()):
            distance = (image.phash ^ reference[reference_keys[j]].phash).bit_count()
            found[(i, j)] = ("exact", distance)
    query_rows = [i for i, k in enumerate(query_keys) if not query[k].low_information]
    reference_rows = [j for j, k in enumerate(reference_keys) if not reference[k].low_information]
    matches = find_cross_matches(
        _phash_array([query[query_keys[i]] for i in query_rows]),
        _phash_array([reference[reference_keys[j]] for j in reference_rows]),
        threshold,
    )
    for i, j, distance in zip(
        matches.left.tolist(), matches.right.tolist(), matches.distance.tolist(), strict=True
    ):
        found.setdefault((query_rows[i], reference_rows[j]), ("near", distance))
    return [
        DuplicateFinding(kind, "across_splits", query_keys[i], reference_keys[j], distance)
        for (i, j), (kind, distance) in sorted(found.items())
    ]


def _sorted_keys(mapping: Mapping) -> list:
    """Keys in sorted order when they compare (the usual str ids), else in input order."""
    keys = list(mapping)
    try:
        return sorted(keys)
    except TypeError:
        return keys
