"""The render on Ray writes what the local render writes, byte for byte, and fails and resumes
the same way."""

from __future__ import annotations

import shutil

import polars as pl
import pytest

from benchsmith.builders.mmneedle.config import RenderConfig
from benchsmith.builders.mmneedle.plan_fingerprint import plan_fingerprint
from benchsmith.builders.mmneedle.render import render_mmneedle
from benchsmith.core.errors import BenchsmithError, SourceError
from benchsmith.core.hashing import params_hash

RAY = RenderConfig(workers=2, executor="ray")


def _files(folder):
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def test_the_sample_profile_renders_to_the_same_bytes_on_ray(ray_cluster, built, tmp_path):
    """Every grid of the sample-profile plan (N = 1, 2, 4, 8), against the local render the
    session built with one worker."""
    render_mmneedle(built["plan"], tmp_path / "ray", RAY)
    local, on_ray = _files(built["render"]), _files(tmp_path / "ray")
    assert sorted(on_ray) == sorted(local)
    assert on_ray == local  # stitched parquet, source hashes, render_info (no executor in it)


def test_cells_off_the_jpeg_block_grid_render_as_pixels_on_ray_too(ray_cluster, built, tmp_path):
    """24 px cells are not whole 16 px MCUs: both executors paste RGBX cells and encode."""
    local = render_mmneedle(built["plan"], tmp_path / "local", RenderConfig(cell_size=24))
    on_ray = render_mmneedle(
        built["plan"], tmp_path / "ray", RenderConfig(cell_size=24, workers=2, executor="ray")
    )
    assert local["jpeg_engine"] == on_ray["jpeg_engine"] == "pillow"
    assert _files(tmp_path / "ray") == _files(tmp_path / "local")


def test_a_corrupt_source_on_ray_names_the_file_and_writes_nothing(ray_cluster, built, tmp_path):
    images = tmp_path / "val2014"
    shutil.copytree(built["coco"] / "val2014", images)
    used = pl.read_parquet(built["plan"] / "pools" / "n2.parquet")["cells"].to_list()[0][0]
    victim = images / used["file_name"]
    data = victim.read_bytes()
    scan = data.index(b"\xff\xda")
    victim.write_bytes(data[: scan + (len(data) - scan) // 2] + b"\xff\xd9")
    with pytest.raises(SourceError, match="premature end") as err:
        render_mmneedle(built["plan"], tmp_path / "render", RAY, images)
    assert str(victim) in str(err.value)
    assert not (tmp_path / "render").exists()


def test_a_render_killed_on_ray_resumes_from_its_finished_grids(ray_cluster, built, tmp_path):
    key = params_hash({"plan": plan_fingerprint(built["plan"]), "render": RAY.identity()})[:16]
    partial = tmp_path / "render.partial" / key
    partial.mkdir(parents=True)
    planted = built["render"] / "stitched" / "n8.parquet"
    shutil.copyfile(planted, partial / "n8.parquet")  # as a run killed after grid 8 left it
    before = (partial / "n8.parquet").stat().st_mtime_ns
    render_mmneedle(built["plan"], tmp_path / "render", RAY)
    out = tmp_path / "render" / "stitched"
    assert (out / "n8.parquet").stat().st_mtime_ns == before  # moved into place, not rendered
    assert _files(tmp_path / "render") == _files(built["render"])


def test_an_unknown_executor_in_params_is_refused():
    with pytest.raises(BenchsmithError, match="unknown executor 'rey'"):
        RenderConfig.from_params({"mmneedle": {"render": {"executor": "rey"}}})
