"""Publish's column-built rows are the dict-built rows the audit re-derives, value for value."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchsmith.builders.mmneedle.config import PlanConfig, RenderConfig
from benchsmith.builders.mmneedle.features import HAYSTACK_FEATURES, SAMPLE_FEATURES
from benchsmith.builders.mmneedle.plan import plan_mmneedle, write_plan
from benchsmith.builders.mmneedle.provenance_columns import SourceTable
from benchsmith.builders.mmneedle.publication import (
    BuildInputs,
    haystack_batches,
    sample_batches,
)
from benchsmith.builders.mmneedle.render import render_mmneedle
from benchsmith.builders.mmneedle.rows import haystack_row, sample_row
from benchsmith.core.errors import BenchsmithError
from benchsmith.sources.coco.reader import read_captions


def dict_haystacks(inputs: BuildInputs, grid: int) -> pa.Table:
    """The haystack rows one dict at a time: cells from the plan, images from the render."""
    pool = pl.read_parquet(inputs.plan_dir / "pools" / f"n{grid}.parquet")
    cells_of = {r["stitched_id"]: r["cells"] for r in pool.iter_rows(named=True)}
    rendered = pq.read_table(inputs.render_dir / "stitched" / f"n{grid}.parquet").to_pylist()
    rows = [
        haystack_row(inputs.context, r["stitched_id"], grid, cells_of[r["stitched_id"]],
                     r["image"], r["sha256"])
        for r in rendered
    ]  # fmt: skip
    return pa.Table.from_pylist(rows, schema=HAYSTACK_FEATURES.arrow_schema)


def dict_samples(inputs: BuildInputs, config: str) -> pa.Table:
    frame = pl.read_parquet(inputs.plan_dir / "samples" / f"{config}.parquet")
    rows = [sample_row(inputs.context, row) for row in frame.iter_rows(named=True)]
    return pa.Table.from_pylist(rows, schema=SAMPLE_FEATURES.arrow_schema)


@pytest.fixture(scope="module")
def legacy_build(tmp_path_factory, sample_coco):
    """A legacy-order plan (its samples carry the original's flaws, flagged in provenance) and
    its render: the decisions the default order never makes."""
    root = tmp_path_factory.mktemp("legacy_columns")
    source = read_captions(sample_coco / "annotations" / "captions_val2014.json")
    config = PlanConfig(order="legacy", pool_size=12, samples_per_config=6)
    write_plan(plan_mmneedle(source, config), source, root / "plan", sample_coco / "val2014")
    render_mmneedle(root / "plan", root / "render", RenderConfig(workers=1))
    return BuildInputs.read(root / "plan", root / "render")


@pytest.mark.parametrize("which", ["canonical", "legacy"])
def test_column_built_rows_equal_the_dict_built_rows(which, built, legacy_build):
    inputs = (
        BuildInputs.read(built["plan"], built["render"]) if which == "canonical" else legacy_build
    )
    publication_configs = sorted(p.stem for p in (inputs.plan_dir / "samples").glob("*.parquet"))
    decided = set()
    for grid in (1, 2, 4, 8):
        columns = pa.concat_tables(haystack_batches(inputs, grid))
        assert columns.num_rows > 0
        assert columns.equals(dict_haystacks(inputs, grid)), f"haystacks_n{grid}"
    for config in publication_configs:
        batches = list(sample_batches(inputs, config))
        columns = pa.concat_tables(batches)
        assert columns.equals(dict_samples(inputs, config)), config
        for row in columns.column("provenance").to_pylist():
            decided |= {d["reason"] for d in row["decisions"]}
            assert len(row["sources"]) % 2 == 0  # a caption and an image per needle
    # rows with decisions are compared too: the default order's slot shortage, legacy's flaws
    expected = {
        "canonical": {"MORE_NEEDLES_THAN_SLOTS"},
        "legacy": {"DUPLICATE_IMAGE_IN_HAYSTACK", "AMBIGUOUS_GOLD_ANSWER"},
    }
    assert decided >= expected[which]


def test_a_sample_config_is_cut_into_batches_of_a_thousand(built, monkeypatch):
    import benchsmith.builders.mmneedle.publication as publication

    monkeypatch.setattr(publication, "SAMPLE_BATCH", 3)
    inputs = BuildInputs.read(built["plan"], built["render"])
    batches = list(sample_batches(inputs, "m10_n2_k5"))
    assert [b.num_rows for b in batches] == [3, 3, 3, 1]
    assert pa.concat_tables(batches).equals(dict_samples(inputs, "m10_n2_k5"))


def test_an_unknown_source_image_is_an_error_naming_it():
    table = SourceTable([5, 3], [{"id": "5"}, {"id": "3"}], "COCO image")
    assert table.take(np.array([3, 5, 3])).field("id").to_pylist() == ["3", "5", "3"]
    with pytest.raises(BenchsmithError, match=r"1 COCO image\(s\) not among .*\[4\]"):
        table.take(np.array([3, 4]))
    with pytest.raises(BenchsmithError, match=r"\[9\]"):
        table.take(np.array([9]))  # past the largest key
    with pytest.raises(BenchsmithError, match=r"\[1\]"):
        SourceTable([], [], "COCO image").take(np.array([1]))
