"""Twin pictures: images that are one picture under several ids, grouped so a build can treat
each group as one picture.

COCO holds some photos under two image ids, byte-identical or re-encoded. A builder that
compares ids (or captions) only can put both in one MMNeedle haystack, or pick one as a
"negative" needle while its twin sits in the haystack, which makes the gold answer false.

Two images are *linked* when their decoded pixels are equal (``pixel_sha256``) or their
perceptual hashes are within ``threshold`` bits (flat, low-information images link by pixels
only: their pHash is noise, see :mod:`benchsmith.images.hashes`). A **twin group** is a
connected component of that relation with two or more members: if A looks like B and B like C,
all three are one picture to a sampler, even when A and C are a few bits further apart. The
group keeps one member, its smallest id, so which copy survives never depends on file order.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchsmith.images.hashes import ImageHashes
from benchsmith.images.near_duplicates import check_threshold, find_near_duplicate_pairs


@dataclass(frozen=True)
class TwinGroup:
    """Ids showing one picture (sorted), the id kept, and how they are linked: ``exact``
    when every member has the same pixels, else ``near``; ``max_distance`` is the largest
    pHash distance of a link inside the group."""

    ids: tuple[Any, ...]
    kind: str
    max_distance: int

    @property
    def keep(self) -> Any:
        return self.ids[0]

    def as_dict(self) -> dict[str, Any]:
        return {
            "ids": list(self.ids),
            "keep": self.keep,
            "kind": self.kind,
            "max_distance": self.max_distance,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TwinGroup:
        return cls(tuple(data["ids"]), str(data["kind"]), int(data["max_distance"]))


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, i: int, j: int) -> None:
        a, b = self.find(i), self.find(j)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


def find_twin_groups(
    hashes: Mapping[Hashable, ImageHashes], threshold: int, *, workers: int | None = None
) -> list[TwinGroup]:
    """Twin groups among ``hashes`` (ids must sort among themselves), sorted by their kept id."""
    threshold = check_threshold(threshold)
    keys = sorted(hashes)
    values = [hashes[k] for k in keys]
    links = _UnionFind(len(keys))
    distance_of: dict[tuple[int, int], int] = {}
    by_pixels: dict[str, list[int]] = defaultdict(list)
    for index, value in enumerate(values):
        by_pixels[value.pixel_sha256].append(index)
    for members in by_pixels.values():
        for other in members[1:]:
            links.union(members[0], other)
    structured = [i for i, value in enumerate(values) if not value.low_information]
    phashes = np.array([values[i].phash for i in structured], dtype=np.uint64)
    matches = find_near_duplicate_pairs(phashes, threshold, workers=workers)
    for a, b, distance in zip(
        matches.left.tolist(), matches.right.tolist(), matches.distance.tolist(), strict=True
    ):
        i, j = structured[a], structured[b]
        links.union(i, j)
        distance_of[(i, j)] = distance
    components: dict[int, list[int]] = defaultdict(list)
    for index in range(len(keys)):
        components[links.find(index)].append(index)
    widest: dict[int, int] = defaultdict(int)
    for (i, _), distance in distance_of.items():
        root = links.find(i)
        widest[root] = max(widest[root], distance)
    groups = []
    for root, members in components.items():
        if len(members) < 2:
            continue
        pixels = {values[i].pixel_sha256 for i in members}
        kind = "exact" if len(pixels) == 1 else "near"
        groups.append(TwinGroup(tuple(keys[i] for i in members), kind, widest[root]))
    return sorted(groups, key=lambda group: group.keep)


def set_aside(groups: list[TwinGroup]) -> set[Any]:
    """Every id a group does not keep: drop these and each picture appears once."""
    return {member for group in groups for member in group.ids[1:]}


def picture_of(groups: list[TwinGroup]) -> dict[Any, Any]:
    """id -> the kept id of its group, for every id in a group (others are their own)."""
    return {member: group.keep for group in groups for member in group.ids}
