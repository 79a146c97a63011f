"""``benchsmith vlicl``: sample -> build -> leakage -> publish -> audit through the CLI."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import datasets
import pytest
import yaml

import benchsmith.cli as cli
from benchsmith.commands import vlicl


@pytest.fixture(autouse=True)
def _with_vlicl(monkeypatch):
    """The real entry point, with ``vlicl`` registered if cli.py does not do it (yet)."""
    original = cli.build_parser

    def build_parser() -> argparse.ArgumentParser:
        parser = original()
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        if "vlicl" not in commands.choices:
            vlicl.register(commands)
        return parser

    monkeypatch.setattr(cli, "build_parser", build_parser)


def test_help_texts(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["vlicl", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    for step in ("sample", "build", "leakage", "publish", "audit"):
        assert step in out
    with pytest.raises(SystemExit):
        cli.main(["vlicl", "build", "--help"])
    out = capsys.readouterr().out
    assert "--mode" in out and "--ingest-dir" in out and "--params" in out and "--out" in out


def test_sample_build_leakage_publish_audit(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["vlicl", "sample", "src"]) == 0
    assert capsys.readouterr().out == ""  # status on stderr, stdout clean
    assert (tmp_path / "src/miniimagenet/test.csv").is_file()
    assert (tmp_path / "src/clevr/CLEVR_v1.0/scenes/CLEVR_val_scenes.json").is_file()
    params = {
        "profile": "sample",
        "version": "3.1.4",
        "vlicl": {
            "tasks": ["clevr", "operator_induction"],
            "sources": {"sample": {"root": "src"}},
            "leakage": {"image_threshold": 3},
            "publish": {"out": "pub", "max_shard_mb": 1},
        },
    }
    Path("params.yaml").write_text(yaml.safe_dump(params))
    assert cli.main(["vlicl", "build", "--params", "params.yaml", "--out", "b"]) == 0
    built = json.loads(capsys.readouterr().out)
    assert set(built["counts"]) == {"clevr", "operator_induction"} and built["mode"] == "rebuild"
    assert cli.main(["vlicl", "leakage", "b", "--params", "params.yaml", "--out", "leak.json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["removed_queries"] == 0
    assert json.loads(Path("leak.json").read_text())["image_threshold"] == 3
    assert not Path("b/leakage.json").exists()
    assert (
        cli.main(["vlicl", "publish", "b", "--leakage", "leak.json", "--params", "params.yaml"])
        == 0
    )
    info = json.loads(Path("pub/build_info.json").read_text())
    assert info["version"] == "3.1.4" and info["leakage"]["image_threshold"] == 3
    query = datasets.load_dataset(str(tmp_path / "pub"), "clevr", split="query")
    assert query.num_rows == built["counts"]["clevr"]["query"]
    assert cli.main(["vlicl", "audit", "pub"]) == 0
    assert capsys.readouterr().out.startswith("audit all configs: OK")
    victim = next(Path("src/clevr/CLEVR_v1.0/images/val").glob("*.png"))
    victim.write_bytes(victim.read_bytes() + b"\0")
    assert cli.main(["vlicl", "audit", "pub", "--config", "clevr"]) == 1
    assert str(victim.resolve()) in capsys.readouterr().out


def test_user_errors_exit_2_naming_the_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["vlicl", "leakage", "missing_build"]) == 2
    err = capsys.readouterr().err
    assert "missing_build" in err and "vlicl build" in err and "Traceback" not in err
    assert cli.main(["vlicl", "publish", "missing_build", "--root", "clevr"]) == 2
    assert "NAME=DIR" in capsys.readouterr().err
    assert (
        cli.main(
            ["vlicl", "build", "--out", "b", "--clevr", "nowhere", "--miniimagenet", "nowhere"]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "nowhere" in err and "Traceback" not in err and not Path("b").exists()
