"""Duplicate-image findings inside samples and across splits, on real and hand-made hashes."""

from __future__ import annotations

import io
import random

import numpy as np
import pytest
from PIL import Image, PngImagePlugin

from benchsmith.images.duplicates import (
    DuplicateFinding,
    duplicates_across,
    duplicates_within,
    duplicates_within_samples,
)
from benchsmith.images.hashes import ImageHashes, hash_image


def photo(seed: int) -> Image.Image:
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, size=(6, 8, 3), dtype=np.uint8)
    field = np.asarray(Image.fromarray(coarse).resize((128, 96), Image.Resampling.BICUBIC))
    grain = rng.integers(-10, 11, size=field.shape)
    return Image.fromarray(np.clip(field + grain, 0, 255).astype(np.uint8))


def hashed(image: Image.Image, fmt: str, **options) -> ImageHashes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return hash_image(buffer.getvalue())


@pytest.fixture(scope="module")
def pictures() -> dict[str, ImageHashes]:
    """A as PNG, A as PNG with metadata, A as JPEG; B, C, D as PNG."""
    info = PngImagePlugin.PngInfo()
    info.add_text("Software", "other exporter")
    a = photo(1)
    return {
        "a_png": hashed(a, "PNG"),
        "a_png_meta": hashed(a, "PNG", pnginfo=info, compress_level=1),
        "a_jpeg": hashed(a, "JPEG", quality=70),
        "b": hashed(photo(2), "PNG"),
        "c": hashed(photo(3), "PNG"),
        "d": hashed(photo(4), "PNG"),
    }


def h(sha: str, phash: int) -> ImageHashes:
    return ImageHashes(pixel_sha256=sha, phash=phash)


def test_a_haystack_holding_the_same_picture_twice(pictures):
    p = pictures
    samples = {
        "s2": [p["b"], p["c"], p["d"]],
        "s1": [p["a_png"], p["b"], p["a_png_meta"], p["a_jpeg"]],
        "s3": [p["c"]],
    }
    findings = duplicates_within_samples(samples, threshold=8)
    assert [(f.sample_id, f.kind, f.a, f.b) for f in findings] == [
        ("s1", "exact", 0, 2),
        ("s1", "near", 0, 3),
        ("s1", "near", 2, 3),
    ]
    assert all(f.scope == "within_sample" for f in findings)
    assert findings[0].distance == 0


def test_the_same_image_in_two_samples_is_not_a_within_sample_finding(pictures):
    samples = {"x": [pictures["a_png"], pictures["b"]], "y": [pictures["a_png"], pictures["c"]]}
    assert duplicates_within_samples(samples, threshold=8) == []


def test_within_sample_threshold_boundary():
    base = 0xF0F0_0000_FFFF_1234
    images = [
        h("p0", base),
        h("p1", base ^ 0b111),
        h("p2", base ^ 0b1111),
        h("p3", ~base & (2**64 - 1)),
    ]
    findings = duplicates_within_samples({"s": images}, threshold=3)
    assert [(f.a, f.b, f.distance) for f in findings] == [(0, 1, 3), (1, 2, 1)]


def test_support_vs_query_leakage(pictures):
    p = pictures
    query = {"q3": p["b"], "q1": p["a_jpeg"], "q2": p["c"]}
    support = {"r2": p["b"], "r1": p["a_png"], "r3": p["d"]}
    findings = duplicates_across(query, support, threshold=8)
    assert [(f.kind, f.a, f.b) for f in findings] == [("near", "q1", "r1"), ("exact", "q3", "r2")]
    assert all(f.scope == "across_splits" and f.sample_id is None for f in findings)


def test_an_exact_pair_is_reported_once_as_exact():
    query = {"q": h("same", 0xABC)}
    reference = {"r": h("same", 0xABC), "r_near": h("other", 0xABC ^ 1)}
    findings = duplicates_across(query, reference, threshold=4)
    assert findings == [
        DuplicateFinding("exact", "across_splits", "q", "r", 0),
        DuplicateFinding("near", "across_splits", "q", "r_near", 1),
    ]


def test_exact_pixels_are_found_even_when_phashes_are_far():
    """Pixel equality does not depend on the phash threshold (threshold 0 here)."""
    findings = duplicates_across({"q": h("same", 0)}, {"r": h("same", 2**64 - 1)}, threshold=0)
    assert [(f.kind, f.distance) for f in findings] == [("exact", 64)]


def test_findings_do_not_depend_on_input_order():
    rng = np.random.default_rng(0)
    values = rng.integers(0, 2**64, size=300, dtype=np.uint64).tolist()
    query = {f"q{i:03d}": h(f"s{i}", v) for i, v in enumerate(values[:150])}
    reference = {f"r{i:03d}": h(f"s{i + 150}", v ^ (1 << (i % 64))) for i, v in enumerate(values)}
    reference["r_exact"] = query["q007"]
    first = duplicates_across(query, reference, threshold=2)
    shuffled_q, shuffled_r = list(query.items()), list(reference.items())
    random.Random(1).shuffle(shuffled_q)
    random.Random(2).shuffle(shuffled_r)
    assert duplicates_across(dict(shuffled_q), dict(shuffled_r), threshold=2) == first
    assert len([f for f in first if f.kind == "near"]) == 150
    assert [f for f in first if f.kind == "exact"][0].b == "r_exact"


def test_within_split_pairs_use_sorted_keys(pictures):
    p = pictures
    findings = duplicates_within({"z": p["a_png"], "m": p["a_jpeg"], "b": p["b"]}, threshold=8)
    assert [(f.kind, f.scope, f.a, f.b) for f in findings] == [("near", "within_split", "m", "z")]


def test_bad_threshold_is_rejected(pictures):
    with pytest.raises(ValueError, match="threshold"):
        duplicates_across({"q": pictures["b"]}, {"r": pictures["c"]}, threshold=64)


def flat(color: tuple[int, int, int], fmt: str = "JPEG") -> ImageHashes:
    return hashed(Image.new("RGB", (96, 64), color), fmt)


def test_flat_images_are_low_information_and_only_matched_exactly(pictures):
    red, blue, green = flat((200, 30, 30)), flat((30, 30, 200)), flat((30, 200, 30))
    assert red.low_information and blue.low_information
    assert not pictures["a_png"].low_information
    # different solid colours are not near duplicates of each other ...
    assert duplicates_within_samples({"s": [red, blue, green]}, 8) == []
    assert duplicates_across({"q": red}, {"r": blue}, 8) == []
    # ... but the same flat picture twice is still an exact duplicate
    again = flat((200, 30, 30), "PNG")
    png_red = flat((200, 30, 30), "PNG")
    found = duplicates_within_samples({"s": [again, png_red, pictures["a_png"]]}, 8)
    assert [(f.kind, f.a, f.b) for f in found] == [("exact", 0, 1)]
    found = duplicates_across({"q": again}, {"r": png_red}, 8)
    assert [(f.kind, f.a, f.b) for f in found] == [("exact", "q", "r")]
