"""``benchsmith source fetch|link|check|sample|prepare`` for CLEVR, MiniImageNet and COCO."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import datasets
import pytest
from http_server import FileServer

from benchsmith.cli import main
from benchsmith.sources.clevr.reader import read_clevr_scenes
from benchsmith.sources.clevr.sample import write_sample_clevr
from benchsmith.sources.miniimagenet.reader import read_miniimagenet
from benchsmith.sources.miniimagenet.sample import write_sample_miniimagenet


def zip_clevr(sample: Path, zip_path: Path) -> None:
    with zipfile.ZipFile(zip_path, "w") as archive:
        for path in sorted(sample.rglob("*")):
            if path.is_file():
                archive.write(path, f"CLEVR_v1.0/{path.relative_to(sample).as_posix()}")


def test_clevr_fetch_then_link(tmp_path, capsys):
    sample = write_sample_clevr(tmp_path / "made", n_train=3, n_val=2)
    with FileServer(tmp_path / "srv") as server:
        zip_clevr(sample, server.root / "CLEVR_v1.0.zip")
        args = [
            "source",
            "fetch",
            "clevr",
            "--out",
            str(tmp_path / "data"),
            "--lock",
            str(tmp_path / "l.json"),
        ]
        assert main([*args, "--url", server.url("CLEVR_v1.0.zip")]) == 0
        assert capsys.readouterr().out == ""  # status on stderr
        root = tmp_path / "data" / "CLEVR_v1.0"
        assert len(read_clevr_scenes(root, "val")) == 2
        lock = json.loads((tmp_path / "l.json").read_text())
        assert "CLEVR_v1.0.zip" in json.dumps(lock)
        # a changed archive no longer matches the recorded sha256: a clear error, exit 2
        zip_clevr(write_sample_clevr(tmp_path / "other", n_train=4, n_val=2), server.root / "x.zip")
        (server.root / "x.zip").replace(server.root / "CLEVR_v1.0.zip")
        for stale in (tmp_path / "data" / "downloads").glob("*"):
            stale.unlink()
        assert main([*args, "--url", server.url("CLEVR_v1.0.zip")]) == 2
        assert "does not match the checksum recorded" in capsys.readouterr().err
    assert main(["source", "link", "clevr", str(sample), "--out", str(tmp_path / "linked")]) == 0
    linked = tmp_path / "linked" / "CLEVR_v1.0"
    assert linked.is_symlink() and len(read_clevr_scenes(linked, "train")) == 3
    assert (
        main(["source", "link", "clevr", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x")])
        == 2
    )


def test_miniimagenet_check_and_from_parquet(tmp_path, capsys):
    root = write_sample_miniimagenet(tmp_path / "mini")
    assert main(["source", "check", "miniimagenet", str(root), "--no-counts"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["splits"]["test"]["classes"] == 6
    assert main(["source", "check", "miniimagenet", str(root)]) == 2  # not 64/16/20 x 600
    assert "train.csv" in capsys.readouterr().err
    mini = read_miniimagenet(root)
    folder = tmp_path / "parquet"
    folder.mkdir()
    for split, hf_split in (("train", "train"), ("val", "validation"), ("test", "test")):
        rows = [
            {
                "image": {"bytes": image.path.read_bytes(), "path": image.filename},
                "label": image.label,
            }
            for image in mini.splits[split]
        ]
        features = datasets.Features({"image": datasets.Image(), "label": datasets.Value("string")})
        datasets.Dataset.from_list(rows, features=features).to_parquet(
            str(folder / f"{hf_split}-00000-of-00001.parquet")
        )
    assert (
        main(["source", "link", "miniimagenet", str(folder), "--out", str(tmp_path / "ravi")]) == 0
    )
    converted = read_miniimagenet(tmp_path / "ravi")
    for split in ("train", "val", "test"):
        assert sorted(converted.classes(split)) == sorted(mini.classes(split))
        assert len(converted.splits[split]) == len(mini.splits[split])


def test_miniimagenet_link_of_a_ravi_folder_links_it_and_checks_it(tmp_path, capsys):
    root = write_sample_miniimagenet(tmp_path / "mini")
    assert main(["source", "link", "miniimagenet", str(root), "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "images").is_symlink()

    def listing(mini):
        return {s: [(i.filename, i.label) for i in rows] for s, rows in mini.splits.items()}

    assert listing(read_miniimagenet(tmp_path / "out")) == listing(read_miniimagenet(root))
    (root / "test.csv").write_text("filename,label\nmissing.jpg,n01\n", encoding="utf-8")
    assert main(["source", "link", "miniimagenet", str(root), "--out", str(tmp_path / "o2")]) == 2
    assert "missing.jpg" in capsys.readouterr().err


def test_help_lists_each_verb_and_only_the_sources_that_have_it(capsys):
    with pytest.raises(SystemExit):
        main(["source", "fetch", "--help"])
    out = capsys.readouterr().out
    assert "coco" in out and "clevr" in out and "miniimagenet" not in out  # licence-gated
    with pytest.raises(SystemExit):
        main(["source", "sample", "coco", "--help"])
    assert "--n-images" in capsys.readouterr().out
    assert main(["source", "fetch", "miniimagenet", "--out", "x"]) == 2
    assert "has no `fetch` step" in capsys.readouterr().err


def test_prepare_follows_the_params_profile(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    Path("params.yaml").write_text(
        "profile: sample\nseed: 3\nsources:\n  coco:\n    sample: {n_images: 25}\n",
        encoding="utf-8",
    )
    assert main(["source", "prepare", "coco", "--out", "coco"]) == 0
    captions = json.loads(Path("coco/annotations/captions_val2014.json").read_text())
    assert len(captions["images"]) == 25
    Path("params.yaml").write_text("profile: full\nsources:\n  miniimagenet: {}\n", "utf-8")
    assert main(["source", "prepare", "miniimagenet", "--out", "mini"]) == 2
