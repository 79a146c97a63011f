"""Source roots are recorded relative to the dataset: a moved checkout still audits, from any
working directory, and absent sources are reported once with the flag to pass."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from benchsmith.cli import main


@pytest.mark.parametrize("name", ["mmneedle", "vlicl", "curated/vlicl_clevr_query"])
def test_recorded_roots_are_relative(sample_project, name):
    info = json.loads((sample_project / "published" / name / "build_info.json").read_text())
    roots = [v for v in info["roots"].values() if v is not None]
    assert roots and not any(Path(v).is_absolute() for v in roots)
    assert str(sample_project) not in json.dumps(info)  # nothing names where the repo lives


def test_a_moved_checkout_audits_from_another_directory(
    sample_project, tmp_path, monkeypatch, capsys
):
    moved = tmp_path / "elsewhere" / "checkout"
    for part in ("published/mmneedle", "data/sources/coco"):
        shutil.copytree(sample_project / part, moved / part)
    monkeypatch.chdir(tmp_path)
    assert main(["audit", str(moved / "published" / "mmneedle"), "--workers", "1"]) == 0
    assert "OK" in capsys.readouterr().out


def test_absent_sources_are_reported_once_with_the_flag(sample_project, tmp_path, capsys):
    lonely = tmp_path / "lonely" / "mmneedle"
    shutil.copytree(sample_project / "published" / "mmneedle", lonely)
    assert main(["audit", str(lonely), "--workers", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("source root(s) of this dataset are not here") == 1
    assert "--root captions=DIR --root images=DIR" in err
    assert "Traceback" not in err
