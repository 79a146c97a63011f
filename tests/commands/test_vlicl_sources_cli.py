"""``benchsmith clevr fetch|link`` and ``benchsmith miniimagenet check|from-parquet``."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import datasets
from http_server import FileServer

from benchsmith.cli import main
from benchsmith.sources.clevr import read_clevr_scenes
from benchsmith.sources.clevr_sample import write_sample_clevr
from benchsmith.sources.miniimagenet import read_miniimagenet
from benchsmith.sources.miniimagenet_sample import write_sample_miniimagenet


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
            "clevr",
            "fetch",
            "--out",
            str(tmp_path / "data"),
            "--lock",
            str(tmp_path / "l.json"),
        ]
        assert main([*args, "--url", server.url("CLEVR_v1.0.zip")]) == 0
        root = Path(capsys.readouterr().out.strip())
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
    assert main(["clevr", "link", str(sample), "--out", str(tmp_path / "linked")]) == 0
    linked = Path(capsys.readouterr().out.strip())
    assert len(read_clevr_scenes(linked, "train")) == 3
    assert main(["clevr", "link", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x")]) == 2


def test_miniimagenet_check_and_from_parquet(tmp_path, capsys):
    root = write_sample_miniimagenet(tmp_path / "mini")
    assert main(["miniimagenet", "check", str(root), "--no-counts"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["splits"]["test"]["classes"] == 6
    assert main(["miniimagenet", "check", str(root)]) == 2  # not 64/16/20 x 600
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
    assert main(["miniimagenet", "from-parquet", str(folder), "--out", str(tmp_path / "ravi")]) == 0
    converted = read_miniimagenet(tmp_path / "ravi")
    for split in ("train", "val", "test"):
        assert sorted(converted.classes(split)) == sorted(mini.classes(split))
        assert len(converted.splits[split]) == len(mini.splits[split])
