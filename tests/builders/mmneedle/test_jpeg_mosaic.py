"""JPEG mosaics are the bytes Pillow writes for the pasted canvas, and refuse what they can't do."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from benchsmith.builders.mmneedle import jpeg_mosaic
from benchsmith.builders.mmneedle.jpeg_mosaic import (
    MosaicUnsupported,
    TileSet,
    cell_tile,
    encode_tile,
    matches_installed_pillow,
    mosaic_from_slots,
    mosaic_of,
    pack_tile,
    slot_bytes,
    tile_from_jpeg,
)


def _photo_like(rng, side):
    """Smooth colour field + gradient + grain: what photos cost a JPEG encoder."""
    low = rng.integers(0, 256, (3, 3, 3), dtype=np.uint8)
    pixels = np.asarray(Image.fromarray(low).resize((side, side), Image.Resampling.BICUBIC), float)
    pixels += np.linspace(0, rng.uniform(-60, 60), side)[None, :, None]
    pixels += rng.normal(0, rng.uniform(0, 40), (side, side, 3))
    return np.clip(pixels, 0, 255).astype(np.uint8)


def _cells(rng, count, side):
    cells = [_photo_like(rng, side) for _ in range(count)]
    cells[0][:] = 0  # black next to white and saturated tiles: the largest DC differences
    if count > 1:
        cells[1][:] = 255
    if count > 2:
        cells[2][:] = (255, 0, 0)
    return cells


def _pillow_canvas_jpeg(cells, layout, grid, quality):
    side = cells[0].shape[0]
    canvas = np.zeros((grid * side, grid * side, 3), np.uint8)
    for k, tile in enumerate(layout):
        row, col = divmod(k, grid)
        canvas[row * side : (row + 1) * side, col * side : (col + 1) * side] = cells[tile]
    buffer = io.BytesIO()
    Image.fromarray(canvas).save(buffer, "JPEG", quality=quality)
    return buffer.getvalue()


@pytest.mark.parametrize("quality", [1, 30, 75, 95, 100])
@pytest.mark.parametrize(("grid", "side"), [(1, 16), (2, 32), (3, 48), (4, 64), (8, 16)])
def test_a_mosaic_is_pillows_jpeg_of_the_pasted_canvas(grid, side, quality):
    rng = np.random.default_rng(grid * 1000 + side + quality)
    cells = _cells(rng, 6, side)
    layout = rng.integers(0, len(cells), grid * grid).tolist()  # tiles reused, as in pools
    tiles = [tile_from_jpeg(encode_tile(cell, quality)) for cell in cells]
    expected = _pillow_canvas_jpeg(cells, layout, grid, quality)
    assert mosaic_of([tiles[k] for k in layout], grid, quality) == expected


def test_rgbx_cells_give_the_same_tiles_as_rgb():
    cell = _photo_like(np.random.default_rng(0), 32)
    rgbx = np.concatenate([cell, np.zeros((32, 32, 1), np.uint8)], axis=2)
    assert encode_tile(rgbx, 75) == encode_tile(cell, 75)


def test_tiles_read_in_place_from_cache_slots_give_the_same_bytes():
    rng = np.random.default_rng(3)
    side, quality = 32, 80
    cells = _cells(rng, 5, side)
    packed = [pack_tile(tile_from_jpeg(encode_tile(c, quality))) for c in cells]
    slots = np.zeros((len(cells), slot_bytes(side)), np.uint8)
    for k, data in enumerate(packed):
        slots[k, : data.size] = data
    slots.flags.writeable = False
    layout = [4, 0, 0, 2, 1, 3, 2, 4, 1]
    expected = _pillow_canvas_jpeg(cells, layout, 3, quality)
    assert mosaic_from_slots(slots, layout, 3, side, quality) == expected
    assert TileSet.from_packed(packed, side).mosaic(layout, 3, quality) == expected
    assert [cell_tile(c, quality).tobytes() for c in cells] == [p.tobytes() for p in packed]


def test_a_slot_holds_the_largest_tile_a_baseline_encoder_writes():
    noise = np.random.default_rng(5).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    data = pack_tile(tile_from_jpeg(encode_tile(noise, 100)))
    assert data.size + 8 <= slot_bytes(64)
    assert slot_bytes(64) < 64 * 64 * 4 * 2  # and stays within twice the RGBX cell


def _jpeg(pixels, **options):
    buffer = io.BytesIO()
    Image.fromarray(pixels).save(buffer, "JPEG", **options)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda p: _jpeg(p, quality=75, subsampling=0), "4:2:0"),  # 4:4:4
        (lambda p: _jpeg(p[..., 0]), "4:2:0"),  # greyscale
        (lambda p: _jpeg(p, quality=75, progressive=True), "baseline"),
        (lambda p: _jpeg(p[:, :24]), "square"),
        (lambda p: _jpeg(p[:24, :24]), "multiple of 16"),
        (lambda p: _jpeg(p)[:-2], "complete JPEG"),
    ],
)
def test_jpegs_a_mosaic_cannot_be_made_of_are_refused(make, reason):
    pixels = _photo_like(np.random.default_rng(1), 32)
    with pytest.raises(MosaicUnsupported, match=reason):
        tile_from_jpeg(make(pixels))


def test_restart_markers_are_refused():
    pixels = _photo_like(np.random.default_rng(2), 32)
    data = _jpeg(pixels, quality=75)
    # a DRI segment (restart every MCU) before the scan: what encoders write with restarts
    at = data.index(b"\xff\xda")
    with pytest.raises(MosaicUnsupported, match="restart"):
        tile_from_jpeg(data[:at] + b"\xff\xdd\x00\x04\x00\x01" + data[at:])


def test_a_damaged_scan_is_refused_not_stitched():
    pixels = _photo_like(np.random.default_rng(4), 64)
    data = _jpeg(pixels, quality=90)
    start = data.index(b"\xff\xda") + 14  # past the SOS segment of a 3-component scan
    cut = data[: start + (len(data) - start) // 3] + b"\xff\xd9"  # two thirds of the scan lost
    with pytest.raises(MosaicUnsupported, match="does not decode"):
        tile_from_jpeg(cut)


def test_the_self_check_fails_when_pillow_writes_jpegs_differently(monkeypatch):
    assert matches_installed_pillow(75)

    def optimised(cell, quality):  # a Pillow whose JPEGs carry optimised Huffman tables
        image = Image.fromarray(np.ascontiguousarray(cell[..., :3]))
        buffer = io.BytesIO()
        image.save(buffer, "JPEG", quality=quality, optimize=cell.shape[0] > 64)
        return buffer.getvalue()

    matches_installed_pillow.cache_clear()
    monkeypatch.setattr(jpeg_mosaic, "encode_tile", optimised)
    try:
        assert not matches_installed_pillow(74)
    finally:
        matches_installed_pillow.cache_clear()
        jpeg_mosaic._mosaic_setup.cache_clear()


def test_a_malformed_header_is_refused_not_an_index_error():
    data = _jpeg(_photo_like(np.random.default_rng(6), 32))
    with pytest.raises(MosaicUnsupported, match="malformed"):
        tile_from_jpeg(data[:40] + b"\xff\xd9")  # a segment cut short


def test_a_layout_must_fill_the_grid():
    tile = tile_from_jpeg(encode_tile(_photo_like(np.random.default_rng(7), 16), 75))
    with pytest.raises(ValueError, match="needs 4 tiles, got 3"):
        mosaic_of([tile] * 3, 2, 75)


def test_the_index_width_the_parent_uses_is_the_kernels():
    """The render's parent sizes cache slots from ``jpeg_mosaic.INDEX_COLUMNS`` without loading
    the kernels; it must be the width the kernels write."""
    from benchsmith.builders.mmneedle import jpeg_mosaic, jpeg_mosaic_kernel

    assert jpeg_mosaic.INDEX_COLUMNS == jpeg_mosaic_kernel.INDEX_COLUMNS
