"""MMNeedle's steps run by hand with no path flag read and write where ``dvc repro`` does:
COCO from ``mmneedle.sources.coco``, the plan in ``data/mmneedle/plan`` (``PLAN_DIR`` of the
later steps), the twins, render and image-check reports next to it."""

from __future__ import annotations

import json
from pathlib import Path

from benchsmith.cli import main

SMALL = ["--grids", "2", "--haystack-sizes", "1", "--needle-counts", "1", "--pool-size", "4",
         "--samples", "4"]  # fmt: skip


def test_every_step_finds_the_last_ones_output_without_a_path(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["source", "sample", "coco", "--out", "data/sources/coco", "--n-images", "30"]) == 0
    assert main(["build", "mmneedle", "twins", "--workers", "1"]) == 0
    assert Path("data/mmneedle/twins.json").is_file()
    capsys.readouterr()
    assert main(["build", "mmneedle", "plan", *SMALL]) == 0
    assert "twin groups from data/mmneedle/twins.json" in capsys.readouterr().err
    info = json.loads(Path("data/mmneedle/plan/plan_info.json").read_text(encoding="utf-8"))
    assert Path(info["images_dir"]) == Path("data/sources/coco/val2014")
    assert main(["build", "mmneedle", "render", "--workers", "1"]) == 0
    assert sorted(p.name for p in Path("data/mmneedle/render/stitched").iterdir()) == ["n2.parquet"]
    assert main(["build", "mmneedle", "check-images", "--workers", "1"]) == 0
    assert Path("data/mmneedle/image_check.json").is_file()
    assert main(["publish", "mmneedle"]) == 0
    built = json.loads(Path("published/mmneedle/build_info.json").read_text(encoding="utf-8"))
    assert built["image_check"] is not None  # the report beside the plan was found and recorded
    assert main(["audit", "published/mmneedle"]) == 0


def test_another_coco_root_from_params_or_flag(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["source", "sample", "coco", "--out", "elsewhere", "--n-images", "30"]) == 0
    Path("params.yaml").write_text("mmneedle:\n  sources:\n    coco: elsewhere\n", encoding="utf-8")
    assert main(["build", "mmneedle", "plan", *SMALL]) == 0
    info = json.loads(Path("data/mmneedle/plan/plan_info.json").read_text(encoding="utf-8"))
    assert Path(info["images_dir"]) == Path("elsewhere/val2014")
    assert "no twins report (data/mmneedle/twins.json is not there" in capsys.readouterr().err
    Path("params.yaml").unlink()
    code = main(["build", "mmneedle", "plan", *SMALL])  # data/sources/coco is not there
    err = capsys.readouterr().err
    assert code == 2 and "data/sources/coco/annotations/captions_val2014.json" in err
    assert main(["build", "mmneedle", "plan", *SMALL, "--coco", "elsewhere"]) == 0
