"""Strict decoding: damage that Pillow lets through is an error naming the file."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from benchsmith.core.errors import BenchsmithError, SourceError
from benchsmith.core.limits import DEFAULT_MAX_PIXELS, configure, set_max_pixels
from benchsmith.images.decode import decode_rgb, decode_rgbx


def jpeg(width: int = 200, height: int = 150) -> bytes:
    pixels = np.random.default_rng(0).integers(0, 255, (height, width, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


def claiming(data: bytes, width: int, height: int) -> bytes:
    """The JPEG with its frame header (SOF0) claiming another size."""
    at = data.index(b"\xff\xc0") + 5  # marker, length (2), precision (1)
    return data[:at] + struct.pack(">HH", height, width) + data[at + 4 :]


@pytest.fixture(autouse=True)
def _default_limit():
    set_max_pixels(DEFAULT_MAX_PIXELS)
    yield
    set_max_pixels(DEFAULT_MAX_PIXELS)


def _variant(mode: str, size: tuple[int, int], **options) -> bytes:
    """A smooth photo-like picture (gradients + grain) saved as JPEG with ``options``."""
    width, height = size
    rng = np.random.default_rng(width * height)
    ramp = np.linspace(0, 255, width, dtype=np.float32)[None, :, None]
    pixels = ramp + rng.normal(0, 20, (height, width, 3)) + [[[0, 60, -40]]]
    image = Image.fromarray(np.clip(pixels, 0, 255).astype(np.uint8)).convert(mode)
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", **options)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("mode", "size", "options"),
    [
        ("RGB", (200, 150), {"quality": 90}),  # 4:2:0, what cameras and COCO write
        ("RGB", (641, 479), {"quality": 75}),  # odd sizes: partial MCUs on both edges
        ("RGB", (320, 240), {"subsampling": 0}),  # 4:4:4
        ("RGB", (320, 240), {"subsampling": 1}),  # 4:2:2
        ("RGB", (333, 222), {"progressive": True}),
        ("RGB", (320, 240), {"restart_marker_blocks": 4}),
        ("L", (199, 101), {}),  # greyscale
        ("CMYK", (160, 120), {}),  # decoded by Pillow (simplejpeg has no CMYK -> RGB)
    ],
)
def test_a_good_jpeg_decodes_to_the_same_pixels_as_pillow(mode, size, options):
    data = _variant(mode, size, **options)
    with Image.open(io.BytesIO(data)) as image:
        expected = np.asarray(image.convert("RGB"))
    decoded = decode_rgb(data, "good.jpg")
    assert decoded.mode == "RGB" and np.array_equal(np.asarray(decoded), expected)
    rgbx = decode_rgbx(data, "good.jpg")  # the resize path's layout: the same pixels
    assert rgbx.shape == (*expected.shape[:2], 4) and np.array_equal(rgbx[..., :3], expected)


def test_rgbx_decoding_of_other_formats_and_damage():
    pixels = np.random.default_rng(3).integers(0, 256, (21, 34, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "PNG")
    assert np.array_equal(decode_rgbx(buffer.getvalue(), "x.png")[..., :3], pixels)
    with pytest.raises(SourceError, match="corrupt JPEG data") as info:
        decode_rgbx(jpeg()[:3000] + b"\xff\xd9", "cut.jpg")
    assert "cut.jpg" in str(info.value)


def test_a_truncated_cmyk_jpeg_is_still_caught():
    data = _variant("CMYK", (160, 120))
    with pytest.raises(SourceError, match="corrupt JPEG data"):
        decode_rgb(data[: len(data) // 2] + b"\xff\xd9", "cmyk.jpg")


def test_data_ending_early_with_an_end_marker_is_an_error_not_a_grey_image():
    data = jpeg()
    cut = data[: len(data) // 2] + b"\xff\xd9"
    with Image.open(io.BytesIO(cut)) as image:
        image.load()  # Pillow alone accepts it (the bottom half comes out grey)
    with pytest.raises(SourceError, match="corrupt JPEG data.*premature end") as info:
        decode_rgb(cut, Path("val2014/cut.jpg"))
    assert "val2014/cut.jpg" in str(info.value) and "0x" not in str(info.value)


@pytest.mark.parametrize("side", [11_000, 60_000])
def test_a_huge_claimed_size_is_refused_before_decoding(side):
    with pytest.raises(SourceError, match=f"{side}x{side}.*images.max_pixels") as info:
        decode_rgb(claiming(jpeg(), side, side), "bomb.jpg")
    assert "bomb.jpg" in str(info.value) and "Traceback" not in str(info.value)


def test_the_limit_is_a_parameter():
    data = claiming(jpeg(), 11_000, 11_000)
    configure({"images": {"max_pixels": 200_000_000}})
    with pytest.raises(SourceError) as info:  # allowed now; the data is still too short
        decode_rgb(data, "big.jpg")
    assert "max_pixels" not in str(info.value)
    with pytest.raises(BenchsmithError, match=r"images.max_pixels: expected an integer >= 1"):
        configure({"images": {"max_pixels": "lots"}})


def test_garbage_and_truncated_files_name_the_file_without_a_memory_address():
    for bad in (b"not an image", jpeg()[:300]):
        with pytest.raises(SourceError) as info:
            decode_rgb(bad, "x.jpg")
        assert "x.jpg" in str(info.value) and " at 0x" not in str(info.value)
