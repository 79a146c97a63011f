"""Rendering a plan: geometry against source colours, worker independence, errors, resume."""

from __future__ import annotations

import io
import shutil

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from PIL import Image

from benchsmith.builders.mmneedle.config import PlanConfig, RenderConfig
from benchsmith.builders.mmneedle.plan import plan_mmneedle, write_plan
from benchsmith.builders.mmneedle.render import (
    cell_image_ids,
    plan_fingerprint,
    render_mmneedle,
)
from benchsmith.core.errors import BenchsmithError, SourceError
from benchsmith.core.hashing import params_hash
from benchsmith.sources.coco.reader import read_captions
from benchsmith.sources.coco.sample import sample_image_specs


def _stitched(render_dir, grid):
    return pq.read_table(render_dir / "stitched" / f"n{grid}.parquet").to_pylist()


def test_every_cell_shows_its_source_sky(built):
    colors = {spec.image_id: spec.color for spec in sample_image_specs(660, 0)}
    cell = 256
    for grid in (1, 2, 4, 8):
        pool = pl.read_parquet(built["plan"] / "pools" / f"n{grid}.parquet").to_dicts()
        for planned, rendered in list(zip(pool, _stitched(built["render"], grid), strict=True))[:3]:
            assert planned["stitched_id"] == rendered["stitched_id"]
            pixels = np.asarray(Image.open(io.BytesIO(rendered["image"])), dtype=float)
            assert pixels.shape == (grid * cell, grid * cell, 3)
            for c in planned["cells"]:
                y, x = (c["row"] - 1) * cell, (c["col"] - 1) * cell
                sky = slice(y + 4, y + cell // 4 - 4)  # the top quarter of a scene is sky
                mean = pixels[sky, x + 8 : x + cell - 8].reshape(-1, 3).mean(axis=0)
                assert np.abs(mean - colors[c["coco_image_id"]]).max() < 12, (grid, c)


def test_render_info_and_source_hashes(built):
    import hashlib
    import json

    info = json.loads((built["render"] / "render_info.json").read_text())
    assert (
        info["jpeg_engine"] == "benchsmith.builders.mmneedle.jpeg_mosaic"
    )  # 256 px cells: 16 MCUs
    assert info["render"] == {
        "cell_size": 256,
        "jpeg_quality": 75,
        "resample": "bicubic",
        "reducing_gap": None,
    }
    assert info["libraries"]["pillow"] and info["stitched_images"] == {
        "n1": 20,
        "n2": 20,
        "n4": 20,
        "n8": 20,
    }
    files = pl.read_parquet(built["render"] / "source_files.parquet").to_dicts()
    for row in files[:20]:
        expected = hashlib.sha256(
            (built["coco"] / "val2014" / row["file_name"]).read_bytes()
        ).hexdigest()
        assert row["sha256"] == expected
    for row in _stitched(built["render"], 2)[:5]:
        assert row["sha256"] == hashlib.sha256(row["image"]).hexdigest()


@pytest.fixture()
def small_plan(built, tmp_path):
    source = read_captions(built["captions"])
    config = PlanConfig(
        pool_size=6, samples_per_config=2, grids=(2, 4), haystack_sizes=(1,), needle_counts=(1,)
    )
    write_plan(plan_mmneedle(source, config), source, tmp_path / "plan", built["coco"] / "val2014")
    return tmp_path / "plan"


def test_output_bytes_do_not_depend_on_worker_count(small_plan, tmp_path):
    render_mmneedle(small_plan, tmp_path / "one", RenderConfig(cell_size=32, workers=1))
    render_mmneedle(small_plan, tmp_path / "two", RenderConfig(cell_size=32, workers=2))
    for grid in (2, 4):
        a = (tmp_path / "one" / "stitched" / f"n{grid}.parquet").read_bytes()
        assert a == (tmp_path / "two" / "stitched" / f"n{grid}.parquet").read_bytes()


def test_cell_ids_are_read_in_the_plans_cell_order(built):
    for grid in (1, 2, 4, 8):
        pool = pl.read_parquet(built["plan"] / "pools" / f"n{grid}.parquet")
        expected = [[c["coco_image_id"] for c in cells] for cells in pool["cells"].to_list()]
        assert cell_image_ids(pool.to_arrow(), grid).tolist() == expected


def test_a_stitched_image_missing_a_cell_is_a_damaged_plan(built, small_plan, tmp_path):
    pool = pl.read_parquet(small_plan / "pools" / "n2.parquet")
    with pytest.raises(BenchsmithError, match="does not have 4 cells") as error:
        cell_image_ids(pool.with_columns(pl.col("cells").list.head(3)).to_arrow(), 2)
    assert "pools/n2.parquet" in str(error.value) and "plan" in str(error.value)
    # one stitched image a cell short and the next one a cell over: the total alone balances
    cells = pool["cells"].to_list()
    cells[0], cells[1] = cells[0][:3], cells[1] + cells[0][3:]
    uneven = pool.with_columns(pl.Series("cells", cells, dtype=pool["cells"].dtype))
    with pytest.raises(BenchsmithError, match="does not have 4 cells"):
        cell_image_ids(uneven.to_arrow(), 2)
    pool.with_columns(pl.col("cells").list.head(3)).write_parquet(
        small_plan / "pools" / "n2.parquet"
    )
    with pytest.raises(BenchsmithError, match="does not have 4 cells") as error:
        render_mmneedle(small_plan, tmp_path / "out", RenderConfig(cell_size=32, workers=1))
    assert str(small_plan / "pools" / "n2.parquet") in str(error.value)
    assert not list(tmp_path.glob("out*"))  # nothing written, not even the resume folder
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("cell_size", "engine"), [(32, "benchsmith.builders.mmneedle.jpeg_mosaic"), (24, "pillow")]
)
def test_stitched_jpegs_are_pillows_encode_of_the_pasted_cells(
    built, small_plan, tmp_path, cell_size, engine
):
    """Mosaics (cells on whole 16 px MCUs) and canvas encodes alike: Pillow's bytes."""
    from benchsmith.builders.mmneedle.stitching import (
        encode_jpeg,
        load_cell,
        render_stitched_image,
    )

    out = tmp_path / "out"
    info = render_mmneedle(small_plan, out, RenderConfig(cell_size=cell_size, workers=2))
    assert info["jpeg_engine"] == engine
    images = built["coco"] / "val2014"
    for grid in (2, 4):
        pool = pl.read_parquet(small_plan / "pools" / f"n{grid}.parquet").to_dicts()
        for planned, rendered in zip(pool, _stitched(out, grid), strict=True):
            cells = [load_cell(images / c["file_name"], cell_size)[0] for c in planned["cells"]]
            expected = encode_jpeg(render_stitched_image(cells, grid), 75)
            assert rendered["image"] == expected, planned["stitched_id"]


def _copy_images(built, tmp_path):
    images = tmp_path / "val2014"
    shutil.copytree(built["coco"] / "val2014", images)
    return images


def test_bad_source_images_fail_clearly_and_keep_the_previous_render(built, small_plan, tmp_path):
    images = _copy_images(built, tmp_path)
    out = tmp_path / "render"
    render_mmneedle(small_plan, out, RenderConfig(cell_size=32, workers=1), images)
    before = {p.name: p.read_bytes() for p in (out / "stitched").iterdir()}
    used = pl.read_parquet(small_plan / "pools" / "n2.parquet")["cells"].to_list()[0][0][
        "file_name"
    ]
    victim = images / used
    victim.write_bytes(victim.read_bytes()[: len(victim.read_bytes()) // 3])  # truncated JPEG
    with pytest.raises(SourceError) as err:
        render_mmneedle(small_plan, out, RenderConfig(cell_size=48, workers=1), images)
    assert str(victim) in str(err.value)
    victim.unlink()
    with pytest.raises(SourceError, match="missing") as err:
        render_mmneedle(small_plan, out, RenderConfig(cell_size=48, workers=1), images)
    assert str(victim) in str(err.value)
    assert {p.name: p.read_bytes() for p in (out / "stitched").iterdir()} == before
    assert not list((tmp_path / "render.partial").rglob("cells.u8"))  # no orphaned cell cache
    assert not list((tmp_path / "render.partial").rglob("spill-*"))  # nor worker spill files


@pytest.mark.parametrize("workers", [1, 2])
def test_silently_damaged_jpegs_are_errors_naming_the_file(built, small_plan, tmp_path, workers):
    """Data cut short behind an end marker, and a header claiming 60000x60000 pixels: Pillow
    would give a half-grey cell and a DecompressionBombError traceback."""
    images = _copy_images(built, tmp_path)
    used = pl.read_parquet(small_plan / "pools" / "n2.parquet")["cells"].to_list()[0]
    cut, bomb = images / used[0]["file_name"], images / used[1]["file_name"]
    data = cut.read_bytes()
    scan = data.index(b"\xff\xda")  # keep every header, cut the entropy-coded data short
    cut.write_bytes(data[: scan + (len(data) - scan) // 2] + b"\xff\xd9")
    config = RenderConfig(cell_size=32, workers=workers)
    with pytest.raises(SourceError, match="premature end") as err:
        render_mmneedle(small_plan, tmp_path / "render", config, images)
    assert str(cut) in str(err.value) and " at 0x" not in str(err.value)
    cut.write_bytes(data)
    header = bomb.read_bytes()
    at = header.index(b"\xff\xc0") + 5
    bomb.write_bytes(header[:at] + (60000).to_bytes(2, "big") * 2 + header[at + 4 :])
    with pytest.raises(SourceError, match="60000x60000.*images.max_pixels") as err:
        render_mmneedle(small_plan, tmp_path / "render", config, images)
    assert str(bomb) in str(err.value)
    assert not (tmp_path / "render").exists()


def test_an_interrupted_render_reuses_finished_grids(built, small_plan, tmp_path):
    config = RenderConfig(cell_size=32, workers=1)
    reference = tmp_path / "reference"
    render_mmneedle(small_plan, reference, config)
    # Simulate a run that finished grid 2 and died: a finished grid file sits in the partial folder.
    key = params_hash({"plan": plan_fingerprint(small_plan), "render": config.identity()})[:16]
    partial = tmp_path / "render.partial" / key
    partial.mkdir(parents=True)
    shutil.copyfile(reference / "stitched" / "n2.parquet", partial / "n2.parquet")
    marker = pq.read_table(partial / "n2.parquet")
    pq.write_table(
        marker.slice(0, marker.num_rows), partial / "n2.parquet", compression="zstd"
    )  # same rows, other bytes
    planted = (partial / "n2.parquet").read_bytes()
    render_mmneedle(small_plan, tmp_path / "render", config)
    assert (
        tmp_path / "render" / "stitched" / "n2.parquet"
    ).read_bytes() == planted  # reused, not re-rendered
    assert (tmp_path / "render" / "stitched" / "n4.parquet").read_bytes() == (
        reference / "stitched" / "n4.parquet"
    ).read_bytes()
    assert not (tmp_path / "render.partial").exists()


def test_a_render_process_never_imports_pandas_polars_or_numba(small_plan, tmp_path):
    """pandas costs 0.2-0.3 s of start-up and is not needed: pyarrow imports it behind
    ``pa.array`` and ``to_numpy``, so the render reads and builds its columns through their
    buffers; polars (0.13-0.18 s) is not needed to read a plan either, nor pyarrow.compute
    (37 ms, imported by a list column's ``flatten``). numba (0.4 s) is not
    needed anywhere once the kernels are built: the workers' fork server loads them as native
    code, and the parent never loads them (it sizes the cache from a constant and hands even a
    short list of images to the workers)."""
    import subprocess
    import sys

    from benchsmith.builders.mmneedle.jpeg_mosaic import KERNELS as MOSAIC
    from benchsmith.builders.mmneedle.resample import KERNELS as RESAMPLE
    from benchsmith.core.native_kernels import load_kernels

    assert load_kernels(MOSAIC).native and load_kernels(RESAMPLE).native  # built and cached

    code = (
        "import sys\n"
        "from benchsmith.builders.mmneedle.config import RenderConfig\n"
        "from benchsmith.builders.mmneedle.render import render_mmneedle\n"
        "from benchsmith.builders.mmneedle.render_pool import RenderPool\n"
        "def heavy(_):\n"
        "    return sorted(m for m in sys.modules\n"
        "                  if m.split('.')[0] in ('pandas', 'polars', 'numba')\n"
        "                  or m == 'pyarrow.compute')\n"
        "if __name__ == '__main__':\n"
        f"    render_mmneedle({str(small_plan)!r}, {str(tmp_path / 'out')!r}, "
        "RenderConfig(cell_size=32, workers=2))\n"
        "    print(heavy(None))\n"
        "    with RenderPool(2) as workers:  # forked from the render's fork server\n"
        "        print(workers.call(heavy, None))\n"
    )
    script = tmp_path / "render_once.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-2:] == ["[]", "[]"]
    assert (tmp_path / "out" / "stitched" / "n2.parquet").is_file()


def test_a_second_render_of_the_same_output_refuses_while_the_first_renders(small_plan, tmp_path):
    """The finished grids of a render (``OUT.partial``) are its own while it runs: a second
    render of the same output refuses at once, touching neither them nor the output; a real
    concurrent run is a second holder of the same lock."""
    from benchsmith.core.errors import BenchsmithError
    from benchsmith.core.outputs import output_lock

    config = RenderConfig(cell_size=32, workers=1)
    out = tmp_path / "render"
    with output_lock(tmp_path / "render.partial"):  # the first render, mid-way
        with pytest.raises(BenchsmithError, match="another benchsmith run is writing") as err:
            render_mmneedle(small_plan, out, config)
        assert "render.partial" in str(err.value)
    assert not out.exists()
    render_mmneedle(small_plan, out, config)  # once it is done, the next render runs
    assert (out / "render_info.json").is_file() and not (tmp_path / "render.partial").exists()


@pytest.mark.parametrize("damage", ["not parquet", "no cells column", "cells of numbers"])
def test_a_damaged_plan_table_is_a_clear_error_and_writes_nothing(small_plan, tmp_path, damage):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = small_plan / "pools" / "n2.parquet"
    table = pq.ParquetFile(path).read()
    if damage == "not parquet":
        path.write_text("not parquet")
    elif damage == "no cells column":
        pq.write_table(table.drop_columns(["cells"]), path)
    else:
        numbers = pa.array([[1, 2, 3, 4]] * table.num_rows, pa.list_(pa.int64()))
        pq.write_table(table.set_column(table.column_names.index("cells"), "cells", numbers), path)
    out = tmp_path / "out"
    with pytest.raises(BenchsmithError, match="plan") as error:
        render_mmneedle(small_plan, out, RenderConfig(cell_size=32, workers=1))
    assert str(path) in str(error.value) and "build mmneedle plan" in str(error.value)
    assert not out.exists()
