"""``benchsmith source|build|publish|audit`` end to end for VL-ICL, through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
import yaml

import benchsmith.cli as cli


def test_help_lists_every_family_and_its_steps(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["build", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for word in ("mmneedle", "vlicl", "plan", "render", "check-images", "leakage"):
        assert word in out
    with pytest.raises(SystemExit):
        cli.main(["build", "vlicl", "plan", "--help"])
    out = capsys.readouterr().out
    assert "--mode" in out and "--ingest-dir" in out and "--params" in out and "--out" in out
    with pytest.raises(SystemExit):
        cli.main(["publish", "vlicl", "--help"])
    out = capsys.readouterr().out
    assert "--leakage" in out and "--max-shard-mb" in out and "--version" in out


def test_sample_plan_leakage_publish_audit(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["source", "sample", "miniimagenet", "--out", "src/mini"]) == 0
    assert cli.main(["source", "sample", "clevr", "--out", "src/clevr"]) == 0
    assert capsys.readouterr().out == ""  # status on stderr, stdout clean
    assert (tmp_path / "src/mini/test.csv").is_file()
    assert (tmp_path / "src/clevr/CLEVR_v1.0/scenes/CLEVR_val_scenes.json").is_file()
    params = {
        "profile": "sample",
        "version": "3.1.4",
        "vlicl": {
            "tasks": ["clevr", "operator_induction"],
            "sources": {"miniimagenet": "src/mini", "clevr": "src/clevr/CLEVR_v1.0"},
            "leakage": {"image_threshold": 3},
            "publish": {"out": "pub", "max_shard_mb": 1},
        },
    }
    Path("params.yaml").write_text(yaml.safe_dump(params))
    assert cli.main(["build", "vlicl", "plan", "--params", "params.yaml", "--out", "b"]) == 0
    assert capsys.readouterr().out == ""  # a short log on stderr; JSON only when asked
    assert (
        cli.main(["build", "vlicl", "plan", "--params", "params.yaml", "--out", "b", "--json"]) == 0
    )
    built = json.loads(capsys.readouterr().out)
    assert set(built["counts"]) == {"clevr", "operator_induction"} and built["mode"] == "rebuild"
    leakage = [
        "build",
        "vlicl",
        "leakage",
        "b",
        "--params",
        "params.yaml",
        "--out",
        "leak.json",
        "--json",
    ]
    assert cli.main(leakage) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["removed_queries"] == 0
    assert json.loads(Path("leak.json").read_text())["image_threshold"] == 3
    assert not Path("b/leakage.json").exists()
    publish = ["publish", "vlicl", "b", "--leakage", "leak.json", "--params", "params.yaml"]
    assert cli.main(publish) == 0
    info = json.loads(Path("pub/build_info.json").read_text())
    assert info["version"] == "3.1.4" and info["leakage"]["image_threshold"] == 3
    query = datasets.load_dataset(str(tmp_path / "pub"), "clevr", split="query")
    assert query.num_rows == built["counts"]["clevr"]["query"]
    assert cli.main(["audit", "pub"]) == 0
    assert capsys.readouterr().out.startswith("audit all configs: OK")
    victim = next(Path("src/clevr/CLEVR_v1.0/images/val").glob("*.png"))
    victim.write_bytes(victim.read_bytes() + b"\0")
    assert cli.main(["audit", "pub", "--config", "clevr"]) == 1
    assert str(victim.resolve()) in capsys.readouterr().out


def test_user_errors_exit_2_naming_the_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["build", "vlicl", "leakage", "missing_build"]) == 2
    err = capsys.readouterr().err
    assert "missing_build" in err and "vlicl plan" in err and "Traceback" not in err
    assert cli.main(["publish", "vlicl", "missing_build", "--root", "clevr"]) == 2
    assert "NAME=DIR" in capsys.readouterr().err
    plan = [
        "build",
        "vlicl",
        "plan",
        "--out",
        "b",
        "--clevr",
        "nowhere",
        "--miniimagenet",
        "nowhere",
    ]
    assert cli.main(plan) == 2
    err = capsys.readouterr().err
    assert "nowhere" in err and "Traceback" not in err and not Path("b").exists()
    assert cli.main(["audit", "nowhere"]) == 2
    assert "dataset folder not found" in capsys.readouterr().err
