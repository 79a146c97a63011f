"""Pixel sha256 and perceptual hashes of generated images in real formats (PNG, JPEG)."""

from __future__ import annotations

import io

import imagehash
import numpy as np
import pytest
from PIL import Image, PngImagePlugin

from benchsmith.core.errors import SourceError
from benchsmith.images.hashes import (
    ImageHashes,
    hash_image,
    hash_images,
    phash_int,
    pixel_sha256,
)


def photo(seed: int, size: tuple[int, int] = (160, 120)) -> Image.Image:
    """A smooth random colour field with grain: JPEG re-encodes change it only slightly."""
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, size=(6, 8, 3), dtype=np.uint8)
    field = np.asarray(Image.fromarray(coarse).resize(size, Image.Resampling.BICUBIC), np.int16)
    grain = rng.integers(-12, 13, size=field.shape, dtype=np.int16)
    return Image.fromarray(np.clip(field + grain, 0, 255).astype(np.uint8))


def encode(image: Image.Image, fmt: str, **options) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **options)
    return buffer.getvalue()


def png_with_metadata(image: Image.Image) -> bytes:
    info = PngImagePlugin.PngInfo()
    info.add_text("Comment", "re-exported by another tool")
    return encode(image, "PNG", pnginfo=info, compress_level=1)


def distance(a: ImageHashes, b: ImageHashes) -> int:
    return (a.phash ^ b.phash).bit_count()


def test_same_pixels_in_other_png_bytes_are_an_exact_duplicate():
    image = photo(0)
    plain, tagged = encode(image, "PNG", compress_level=9), png_with_metadata(image)
    assert plain != tagged
    a, b = hash_image(plain), hash_image(tagged)
    assert a.pixel_sha256 == b.pixel_sha256 == pixel_sha256(plain)
    assert a.phash == b.phash


def test_jpeg_reencodes_are_near_but_not_exact_duplicates():
    image = photo(1)
    high, low = (
        hash_image(encode(image, "JPEG", quality=95)),
        hash_image(encode(image, "JPEG", quality=60)),
    )
    assert high.pixel_sha256 != low.pixel_sha256
    assert distance(high, low) <= 8


def test_a_different_picture_is_far():
    a, b = hash_image(encode(photo(2), "PNG")), hash_image(encode(photo(3), "PNG"))
    assert a.pixel_sha256 != b.pixel_sha256
    assert distance(a, b) > 16


def test_mode_does_not_matter_only_the_rgb_pixels():
    grey = photo(4).convert("L")
    assert pixel_sha256(encode(grey, "PNG")) == pixel_sha256(encode(grey.convert("RGB"), "PNG"))


def test_the_size_is_part_of_the_pixel_hash():
    data = np.arange(18, dtype=np.uint8)
    wide = Image.frombytes("RGB", (3, 2), data.tobytes())
    tall = Image.frombytes("RGB", (2, 3), data.tobytes())
    assert wide.tobytes() == tall.tobytes()
    assert pixel_sha256(encode(wide, "PNG")) != pixel_sha256(encode(tall, "PNG"))


def test_phash_int_is_imagehash_hex_and_its_distance():
    images = [photo(5), photo(6)]
    ours = [phash_int(image) for image in images]
    theirs = [imagehash.phash(image, hash_size=8) for image in images]
    assert ours == [int(str(h), 16) for h in theirs]
    assert (ours[0] ^ ours[1]).bit_count() == theirs[0] - theirs[1]
    assert all(0 <= value < 2**64 for value in ours)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "empty"])
def test_undecodable_bytes_raise_source_error(damage):
    good = encode(photo(7, (256, 256)), "JPEG", quality=90)
    data = {"truncated": good[: len(good) // 3], "garbage": b"not an image", "empty": b""}[damage]
    with pytest.raises(SourceError) as err:
        hash_image(data, name="images/broken.jpg")
    assert "images/broken.jpg" in str(err.value) and "fix:" in str(err.value)
    with pytest.raises(SourceError):
        pixel_sha256(data)


def _items():
    good = [(f"img{k}", encode(photo(10 + k), "PNG")) for k in range(5)]
    broken = ("broken", encode(photo(20), "JPEG")[:200])
    return [*good[:2], broken, *good[2:]]


def test_hash_images_counts_undecodable_images_instead_of_crashing():
    items = _items()
    hashes, errors = hash_images(items)
    assert list(hashes) == ["img0", "img1", "img2", "img3", "img4"]
    assert list(errors) == ["broken"] and "cannot decode image" in errors["broken"]
    assert hashes["img3"] == hash_image(dict(items)["img3"])


def test_hash_images_with_workers_gives_the_same_result_in_input_order():
    items = _items()
    serial = hash_images(items)
    pooled = hash_images(iter(items), workers=2)
    assert pooled == serial
    assert list(pooled[0]) == list(serial[0])


def test_hash_images_rejects_repeated_keys():
    data = encode(photo(30), "PNG")
    with pytest.raises(ValueError, match="duplicate image key"):
        hash_images([("a", data), ("a", data)])


def test_the_same_bytes_are_hashed_once_under_one_pixel_limit(monkeypatch):
    """A process that hashes one file twice (an audit re-deriving its build's leakage report)
    decodes it once; a lower pixel limit looks again (and refuses the image), and an error is
    never remembered."""
    from benchsmith.core import limits
    from benchsmith.images import hashes

    data = encode(photo(901), "PNG")
    first = hash_image(data)
    decoded = []
    real = hashes.decode_rgb_image
    monkeypatch.setattr(
        hashes, "decode_rgb_image", lambda b, n=None: decoded.append(1) or real(b, n)
    )
    assert hash_image(data) == first and decoded == []
    assert hash_image(encode(photo(902), "PNG")) != first and decoded == [1]
    monkeypatch.setattr(limits, "_max_pixels", 1000)  # 160 x 120 is over it
    with pytest.raises(SourceError):
        hash_image(data)
    with pytest.raises(SourceError):
        hash_image(data)
    assert decoded == [1, 1, 1]
