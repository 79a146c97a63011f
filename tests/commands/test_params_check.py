"""``params.yaml`` is checked against the schema its owners declare before any command runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from benchsmith.cli import main
from benchsmith.commands.params_check import check_params, params_schema
from benchsmith.core.errors import BenchsmithError

REPO_PARAMS = Path(__file__).resolve().parents[2] / "params.yaml"


def shipped() -> dict:
    return yaml.safe_load(REPO_PARAMS.read_text())


EVERY_BLOCK = (
    "sources.coco",
    "sources.clevr",
    "sources.miniimagenet",
    "mmneedle",
    "vlicl",
    "curate",
)


def test_the_shipped_params_file_is_valid():
    check_params(shipped(), REPO_PARAMS, EVERY_BLOCK)


def test_every_block_of_the_shipped_file_is_declared():
    schema = params_schema(EVERY_BLOCK)
    assert set(shipped()) <= set(schema.fields)
    for family in ("mmneedle", "vlicl"):
        assert set(shipped()[family]) <= set(schema.fields[family].fields)


def test_a_block_name_is_checked_by_every_command_its_content_by_the_one_reading_it():
    params = edit(shipped(), "mmneedle.grids", None, rename="grid")
    check_params(params, "p.yaml", ("vlicl",))  # not read by a VL-ICL step
    with pytest.raises(BenchsmithError, match="mmneedle.grid: unknown key"):
        check_params(params, "p.yaml", ("mmneedle",))
    params = edit(shipped(), "mmneedle", None, rename="mmneedel")
    with pytest.raises(BenchsmithError, match="mmneedel: unknown key .did you mean 'mmneedle'"):
        check_params(params, "p.yaml", ("vlicl",))


def edit(params: dict, dotted: str, value, *, rename: str | None = None) -> dict:
    node = params
    *parents, last = dotted.split(".")
    for key in parents:
        node = node[key]
    if rename is not None:
        node[rename] = node.pop(last)
    else:
        node[last] = value
    return params


@pytest.mark.parametrize(
    ("dotted", "value", "rename", "expected"),
    [
        ("profile", None, "profle", "profle: unknown key (did you mean 'profile'?)"),
        ("seed", "zero", None, "seed: expected an integer >= 0, got 'zero' (str)"),
        ("mmneedle.grids", None, "grid", "mmneedle.grid: unknown key (did you mean 'grids'?)"),
        ("mmneedle.grids", "2 4", None, "mmneedle.grids: expected a list of integers >= 1"),
        ("mmneedle.render.resample", "bicubik", None, "(did you mean 'bicubic'?)"),
        ("mmneedle.publish.max_shard_mb", "big", None, "mmneedle.publish.max_shard_mb: expected"),
        ("vlicl.tasks", ["clevr", "open-mi"], None, "vlicl.tasks[1]: expected one of open_mi,"),
        ("vlicl.sizes.sample.clevr", None, "clever", "vlicl.sizes.sample.clever: unknown key"),
        ("vlicl.leakage.image_threshold", 65, None, "expected an integer from 0 to 64, got 65"),
        ("sources.coco.sample.n_images", "many", None, "sources.coco.sample.n_images: expected"),
        ("sources.clevr.full.url", None, "ulr", "sources.clevr.full.ulr: unknown key"),
        ("curate.judges.bins", "papr", None, "curate.judges.bins: expected one of paper, code"),
        ("curate.llm.concurrency", 0, None, "curate.llm.concurrency: expected an integer >= 1"),
        ("curate.seed", None, "sed", "curate.sed: unknown key (did you mean 'seed'?)"),
        ("images.max_pixels", -1, None, "images.max_pixels: expected an integer >= 1, got -1"),
    ],
)
def test_a_typo_or_a_wrong_type_anywhere_is_named(dotted, value, rename, expected):
    params = edit(shipped(), dotted, value, rename=rename)
    with pytest.raises(BenchsmithError) as caught:
        check_params(params, "p.yaml", EVERY_BLOCK)
    assert expected in str(caught.value)


def test_a_curate_target_override_is_checked_like_the_defaults():
    params = shipped()
    params["curate"]["targets"][1]["settings"] = {"images": {"against_split": ["support"]}}
    with pytest.raises(BenchsmithError, match=r"targets\[1\]\.settings\.images\.against_split"):
        check_params(params, "p.yaml", ("curate",))


def test_the_command_refuses_before_running_and_names_the_file_read(tmp_path, monkeypatch, capsys):
    params = edit(shipped(), "mmneedle.grids", None, rename="grid")
    edit(params, "profile", None, rename="profle")
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(params))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "plan"
    code = main(["build", "mmneedle", "plan", "--captions", "missing.json", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert "2 problem(s)" in err and "did you mean 'grids'?" in err
    assert str(tmp_path / "params.yaml") in err and "Traceback" not in err


def test_an_explicit_params_file_is_checked(tmp_path, capsys):
    bad = tmp_path / "elsewhere.yaml"
    shutil.copy(REPO_PARAMS, bad)
    bad.write_text(bad.read_text().replace("seed: 0\n", "seed: zero\n", 1))
    out = tmp_path / "c"
    code = main(["source", "prepare", "coco", "--out", str(out), "--params", str(bad)])
    err = capsys.readouterr().err
    assert code == 2 and "seed: expected an integer" in err and str(bad) in err
    assert not out.exists()
