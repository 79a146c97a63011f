"""Pillow's resize reimplemented: the same bytes as the installed Pillow, for every filter."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from benchsmith.builders.mmneedle import resample
from benchsmith.builders.mmneedle.resample import FILTERS, matches_installed_pillow, resize_rgbx
from benchsmith.builders.mmneedle.stitching import (
    decode_rgb,
    exact_fast_resize,
    load_cell,
    resize_cell,
)


def pillow(pixels: np.ndarray, width: int, height: int, name: str) -> np.ndarray:
    image = Image.fromarray(np.ascontiguousarray(pixels[..., :3]))
    return np.asarray(image.resize((width, height), getattr(Image.Resampling, name.upper())))


def rgbx(rng: np.random.Generator, height: int, width: int, smooth: bool) -> np.ndarray:
    if smooth:  # photo-like: gradients and grain (values near 0 and 255 exercise the clipping)
        ramp = np.linspace(-40, 295, width)[None, :, None]
        noisy = ramp + rng.normal(0, 30, (height, width, 4))
        return np.clip(noisy, 0, 255).astype(np.uint8)
    return rng.integers(0, 256, (height, width, 4), dtype=np.uint8)


COCO_LIKE = [(480, 640), (640, 480), (427, 640), (640, 427), (500, 375), (612, 612)]


@pytest.mark.parametrize("name", FILTERS)
def test_coco_sizes_to_cells_match_pillow(name):
    rng = np.random.default_rng(0)
    for height, width in COCO_LIKE:
        pixels = rgbx(rng, height, width, smooth=True)
        for cell in (64, 256, 333):
            got = resize_rgbx(pixels, cell, cell, name)[..., :3]
            assert np.array_equal(got, pillow(pixels, cell, cell, name)), (height, width, cell)


@pytest.mark.parametrize("name", FILTERS)
def test_random_shapes_match_pillow(name):
    """Reductions, enlargements, one axis only, 1-pixel images, both pass orders."""
    rng = np.random.default_rng(FILTERS.index(name))
    shapes = [(1, 1, 7, 5), (3, 300, 40, 40), (300, 3, 40, 40), (40, 40, 40, 40)]
    shapes += [(int(h), int(w), int(oh), int(ow)) for h, w, oh, ow in rng.integers(1, 400, (40, 4))]
    for k, (height, width, out_h, out_w) in enumerate(shapes):
        pixels = rgbx(rng, height, width, smooth=k % 2 == 0)
        got = resize_rgbx(pixels, out_w, out_h, name)[..., :3]
        expected = pillow(pixels, out_w, out_h, name)
        assert np.array_equal(got, expected), (height, width, out_h, out_w)


def test_the_pass_order_is_pillows_and_it_matters(monkeypatch):
    """A tall image shrinking mostly in height: Pillow 13 resizes vertically first. Rounding
    between the passes makes the order visible, so a wrong order is caught."""
    rng = np.random.default_rng(5)
    pixels = rgbx(rng, 723, 444, smooth=False)
    expected = pillow(pixels, 256, 256, "bicubic")
    assert np.array_equal(resize_rgbx(pixels, 256, 256)[..., :3], expected)
    chosen = resample.vertical_first(444, 723, 256, 256)
    monkeypatch.setattr(resample, "vertical_first", lambda *size: not chosen)
    assert not np.array_equal(resize_rgbx(pixels, 256, 256)[..., :3], expected)
    matches_installed_pillow.cache_clear()
    try:
        assert not matches_installed_pillow("bicubic")  # so callers would fall back to Pillow
    finally:
        matches_installed_pillow.cache_clear()


@pytest.mark.parametrize("name", FILTERS)
def test_the_self_check_passes_on_the_installed_pillow(name):
    assert matches_installed_pillow(name)


def test_bad_arguments_are_clear_errors():
    pixels = np.zeros((4, 4, 4), np.uint8)
    with pytest.raises(ValueError, match=r"\(h, w, 4\) uint8"):
        resize_rgbx(np.zeros((4, 4, 3), np.uint8), 2, 2)
    with pytest.raises(ValueError, match="unknown filter 'nearest'"):
        resize_rgbx(pixels, 2, 2, "nearest")
    with pytest.raises(ValueError, match="positive"):
        resize_rgbx(pixels, 0, 2)


def _jpeg(path, mode: str = "RGB", size=(640, 480)) -> None:
    rng = np.random.default_rng(size[0])
    ramp = np.linspace(0, 255, size[0])[None, :, None]
    pixels = np.clip(ramp + rng.normal(0, 25, (size[1], size[0], 3)), 0, 255).astype(np.uint8)
    Image.fromarray(pixels).convert(mode).save(path, "JPEG", quality=90)


@pytest.mark.parametrize("mode", ["RGB", "L", "CMYK"])
def test_load_cell_gives_the_pillow_path_pixels(tmp_path, mode):
    path = tmp_path / "COCO_val2014_000000000001.jpg"
    _jpeg(path, mode, (640, 427))
    assert exact_fast_resize("bicubic", None)
    cell, data = load_cell(path, 256)
    assert data == path.read_bytes()
    expected = resize_cell(decode_rgb(data, path), 256)
    assert cell.shape == (256, 256, 3) and np.array_equal(cell, expected)


def test_reducing_gap_and_nearest_keep_pillows_own_resize(tmp_path):
    path = tmp_path / "a.png"
    buffer = io.BytesIO()
    pixels = np.random.default_rng(1).integers(0, 256, (300, 500, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(buffer, "PNG")
    path.write_bytes(buffer.getvalue())
    assert not exact_fast_resize("bicubic", 1.0) and not exact_fast_resize("nearest", None)
    for resample_name, gap in (("bicubic", 1.0), ("nearest", None), ("lanczos", None)):
        cell, _ = load_cell(path, 128, resample_name, gap)
        expected = resize_cell(Image.fromarray(pixels), 128, resample_name, gap)
        assert np.array_equal(cell, expected), resample_name
