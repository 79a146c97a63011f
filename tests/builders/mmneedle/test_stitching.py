"""Stitching geometry and decoding errors, on JPEGs in the sample COCO format."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from benchsmith.builders.mmneedle.cell_cache import CellSpec, build_cell_cache
from benchsmith.builders.mmneedle.stitching import (
    encode_jpeg,
    load_cell,
    load_cell_rgbx,
    render_stitched_image,
)
from benchsmith.core.errors import SourceError


def _jpeg(path, color, size=(64, 48), mode="RGB"):
    value = color[0] if mode == "L" else color
    Image.new(mode, size, value).save(path, "JPEG", quality=95)
    return path


def test_cells_land_row_major_with_row_as_y_and_col_as_x(tmp_path):
    colors = [(200, 30, 30), (30, 200, 30), (30, 30, 200), (210, 210, 40)]
    cells = [load_cell(_jpeg(tmp_path / f"{k}.jpg", c), 16)[0] for k, c in enumerate(colors)]
    image = np.asarray(render_stitched_image(cells, 2))
    assert image.shape == (32, 32, 3)
    # cell k -> row k // 2 (y), col k % 2 (x)
    for k, color in enumerate(colors):
        row, col = divmod(k, 2)
        block = (
            image[row * 16 : (row + 1) * 16, col * 16 : (col + 1) * 16].reshape(-1, 3).mean(axis=0)
        )
        assert np.abs(block - color).max() < 6


def test_grayscale_sources_become_rgb_cells(tmp_path):
    cell, data = load_cell(_jpeg(tmp_path / "g.jpg", (90, 90, 90), mode="L"), 8)
    assert cell.shape == (8, 8, 3) and np.abs(cell.astype(int) - 90).max() < 4
    assert data == (tmp_path / "g.jpg").read_bytes()


def test_resize_ignores_aspect_ratio_and_encodes_a_decodable_jpeg(tmp_path):
    cell, _ = load_cell(_jpeg(tmp_path / "wide.jpg", (10, 120, 240), size=(120, 30)), 32)
    assert cell.shape == (32, 32, 3)
    out = Image.open(io.BytesIO(encode_jpeg(render_stitched_image([cell], 1), 75)))
    assert out.format == "JPEG" and out.size == (32, 32) and out.mode == "RGB"


def test_truncated_and_garbage_files_name_the_file(tmp_path):
    good = _jpeg(tmp_path / "good.jpg", (1, 2, 3), size=(256, 256))
    truncated = tmp_path / "truncated.jpg"
    truncated.write_bytes(good.read_bytes()[:300])
    garbage = tmp_path / "garbage.jpg"
    garbage.write_bytes(b"not a jpeg at all")
    for bad in (truncated, garbage):
        with pytest.raises(SourceError) as err:
            load_cell(bad, 16)
        assert str(bad) in str(err.value) and "fix:" in str(err.value)
    with pytest.raises(SourceError, match="missing"):
        load_cell(tmp_path / "absent.jpg", 16)


def test_cell_cache_holds_each_source_once_and_hashes_it(tmp_path):
    import hashlib

    paths = [_jpeg(tmp_path / f"{k}.jpg", (k * 40, 100, 200 - k * 40)) for k in range(5)]
    cells, hashes = build_cell_cache(paths, tmp_path / "cache.u8", CellSpec(12))
    assert cells.shape == (5, 12, 12, 4)  # RGBX: see render_stitched_image
    for k, path in enumerate(paths):
        assert np.array_equal(cells[k][..., :3], load_cell(path, 12)[0])
        assert hashes[k] == hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("gap", [None, 1.0])  # the resize reimplemented / Pillow's own
def test_rgbx_cells_stitch_to_the_same_jpeg_bytes_as_rgb_cells(tmp_path, gap):
    rng = np.random.default_rng(7)
    paths = []
    for k in range(4):
        pixels = np.clip(rng.normal(120, 60, (90, 130, 3)), 0, 255).astype(np.uint8)
        paths.append(tmp_path / f"{k}.jpg")
        Image.fromarray(pixels).save(paths[-1], "JPEG", quality=90)
    rgb = [load_cell(p, 48, reducing_gap=gap)[0] for p in paths]
    rgbx = [load_cell_rgbx(p, 48, reducing_gap=gap)[0] for p in paths]
    for three, four in zip(rgb, rgbx, strict=True):
        assert four.shape == (48, 48, 4) and np.array_equal(four[..., :3], three)
    image = render_stitched_image(rgbx, 2)
    assert image.mode == "RGBX"
    assert encode_jpeg(image, 75) == encode_jpeg(render_stitched_image(rgb, 2), 75)
