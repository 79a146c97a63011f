"""Twin groups: the same picture under several ids, linked by pixels or perceptual hash."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from curate_fixtures import jpeg_bytes, png_bytes, texture
from PIL import Image

from benchsmith.images.hashes import ImageHashes, hash_image
from benchsmith.images.twins import TwinGroup, find_twin_groups, picture_of, set_aside


def hashes_of(images: dict[int, bytes]) -> dict[int, ImageHashes]:
    return {key: hash_image(data) for key, data in images.items()}


def test_identical_and_re_encoded_copies_group_and_the_smallest_id_is_kept():
    picture, other = texture(1, 96), texture(2, 96)
    images = {
        40: png_bytes(picture),
        12: png_bytes(picture, note="same pixels, other metadata"),  # exact twin of 40
        77: jpeg_bytes(other, 95),
        31: jpeg_bytes(other, 60),  # a lossy re-encode of 77
        5: jpeg_bytes(texture(3, 96), 95),  # alone
    }
    hashes = hashes_of(images)
    assert hashes[31].pixel_sha256 != hashes[77].pixel_sha256
    groups = find_twin_groups(hashes, 4)
    assert [g.ids for g in groups] == [(12, 40), (31, 77)]
    assert [g.kind for g in groups] == ["exact", "near"]
    assert [g.keep for g in groups] == [12, 31]
    assert groups[1].max_distance == (hashes[31].phash ^ hashes[77].phash).bit_count()
    assert set_aside(groups) == {40, 77}
    assert picture_of(groups) == {12: 12, 40: 12, 31: 31, 77: 31}
    assert [TwinGroup.from_dict(g.as_dict()) for g in groups] == groups
    assert find_twin_groups(dict(reversed(list(hashes.items()))), 4) == groups  # order-free


def test_a_chain_of_near_copies_is_one_picture_even_when_its_ends_are_further_apart():
    """A ~ B and B ~ C within the threshold, A and C beyond it: all three are one picture
    (otherwise a sampler could pair A with C)."""
    a = ImageHashes("a", 0b0000)
    b = ImageHashes("b", 0b0011)
    c = ImageHashes("c", 0b1111)
    groups = find_twin_groups({1: a, 2: b, 3: c}, 2)
    assert [(g.ids, g.kind, g.max_distance) for g in groups] == [((1, 2, 3), "near", 2)]
    assert find_twin_groups({1: a, 3: c}, 2) == []  # without the middle link: two pictures


def test_flat_images_are_twins_only_by_pixels():
    """A blank page's perceptual hash is noise: two different flat images are not twins, two
    copies of one flat image are."""
    white = Image.new("RGB", (64, 64), (250, 250, 250))
    grey = Image.new("RGB", (64, 64), (128, 128, 128))
    images = {1: png_bytes(white), 2: png_bytes(grey), 3: png_bytes(white, note="copy")}
    hashes = hashes_of(images)
    assert all(h.low_information for h in hashes.values())
    assert [(g.ids, g.kind) for g in find_twin_groups(hashes, 63)] == [((1, 3), "exact")]


def test_matches_a_brute_force_search_over_random_hashes():
    """Groups equal the connected components of the all-pairs relation, found here by hand."""
    rng = np.random.default_rng(0)
    base = rng.integers(0, 2**63, size=30, dtype=np.int64).tolist()
    values = base + [v ^ (1 << int(rng.integers(64))) for v in base[:10]]  # 10 near copies
    hashes = {k: ImageHashes(f"p{k}", int(v)) for k, v in enumerate(values)}
    hashes[45] = ImageHashes("p3", 12345)  # exact by pixels, unrelated phash
    parent = {k: k for k in hashes}

    def root(k: int) -> int:
        while parent[k] != k:
            k = parent[k]
        return k

    for i, j in itertools.combinations(sorted(hashes), 2):
        near = (hashes[i].phash ^ hashes[j].phash).bit_count() <= 3
        if near or hashes[i].pixel_sha256 == hashes[j].pixel_sha256:
            parent[max(root(i), root(j))] = min(root(i), root(j))
    components: dict[int, list[int]] = {}
    for k in sorted(hashes):
        components.setdefault(root(k), []).append(k)
    expected = sorted(tuple(c) for c in components.values() if len(c) > 1)
    assert [g.ids for g in find_twin_groups(hashes, 3)] == expected
    assert len(expected) == 10


def test_a_bad_threshold_is_refused():
    with pytest.raises(ValueError):
        find_twin_groups({}, 64)
