"""``benchsmith score`` treats prediction files the same way in every family."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchsmith.cli import main
from benchsmith.scoring import SCORERS

CASES = [("mmneedle", "m1_n2_k1", "sample_id"), ("vlicl", "clevr", "query_id")]


def _write(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(("family", "config", "id_key"), CASES)
def test_prediction_files_behave_alike(sample_project, tmp_path, capsys, family, config, id_key):
    dataset = sample_project / "published" / family
    rows = SCORERS.get(family).reference_predictions(dataset, config)
    argv = ["score", str(dataset), "--config", config, "--predictions"]

    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    assert main([*argv, str(empty)]) == 1
    err = capsys.readouterr().err
    assert "has no prediction rows" in err and "--allow-empty" in err
    assert main([*argv, str(empty), "--allow-empty"]) == 0
    assert json.loads(capsys.readouterr().out)["missing"] == len(rows)

    not_object = _write(tmp_path / "list.jsonl", [rows[0], [1, 2]])
    assert main([*argv, str(not_object)]) == 2
    assert "line 2: not a JSON object" in capsys.readouterr().err

    twice = _write(tmp_path / "twice.jsonl", [rows[0], rows[1], rows[0]])
    assert main([*argv, str(twice)]) == 2
    assert "line 3: second row" in capsys.readouterr().err

    stranger = {**rows[0], id_key: 987654 if family == "mmneedle" else "clevr/query/98765"}
    unknown = _write(tmp_path / "unknown.jsonl", [*rows, stranger])
    assert main([*argv, str(unknown)]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["unknown_ids"] == 1
    assert "1 prediction row(s) name ids that are not samples" in captured.err
    assert main([*argv, str(unknown), "--strict-ids"]) == 2
    assert "--strict-ids" in capsys.readouterr().err


def test_curated_vlicl_subset_is_scored_by_vlicl(sample_project, tmp_path, capsys):
    curated = sample_project / "published" / "curated" / "vlicl_clevr_query"
    rows = SCORERS.get("vlicl").reference_predictions(curated, "clevr")
    path = _write(tmp_path / "p.jsonl", rows)
    assert main(["score", str(curated), "--config", "clevr", "--predictions", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["overall"]["accuracy"] == 1.0


def test_a_folder_or_config_that_cannot_be_scored_says_why(sample_project, tmp_path, capsys):
    """A missing folder, a folder benchsmith did not write, a config of stitched images or of
    episode lists, and an absent config: each error says exactly that, with what can be scored."""
    preds = _write(tmp_path / "p.jsonl", [{"sample_id": 0, "response": "1, 1, 1"}])
    published = sample_project / "published"

    def score(dataset: Path, config: str) -> str:
        argv = ["score", str(dataset), "--config", config, "--predictions", str(preds)]
        assert main(argv) == 2
        captured = capsys.readouterr()
        assert captured.out == ""
        return captured.err

    assert "dataset folder not found" in score(tmp_path / "absent", "m1_n2_k1")
    assert "not a benchsmith dataset folder" in score(tmp_path, "m1_n2_k1")
    err = score(published / "mmneedle", "haystacks_n2")
    assert "'haystacks_n2' holds no samples" in err and "stitched images" in err
    assert "m1_n2_k1" in err and "haystacks_n1" not in err and "FieldRef" not in err
    err = score(published / "vlicl", "episodes")
    assert "'episodes' holds no samples" in err and "clevr" in err
    err = score(published / "curated" / "mmneedle_m1_n2_k1", "m1_n2_k2")
    assert "has no config 'm1_n2_k2'; configs with samples: m1_n2_k1" in err
