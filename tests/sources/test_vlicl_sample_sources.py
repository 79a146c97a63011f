"""The VL-ICL sample profile's raw sources: both miniatures, readable by the real readers."""

from __future__ import annotations

import hashlib
from pathlib import Path

from benchsmith.sources.clevr import read_clevr_scenes
from benchsmith.sources.miniimagenet import read_miniimagenet, require_images_per_class
from benchsmith.sources.vlicl_sample import write_vlicl_sample_sources


def tree_hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_writes_both_sources_where_the_readers_expect_them(tmp_path: Path) -> None:
    paths = write_vlicl_sample_sources(tmp_path / "sources")
    assert paths == {
        "miniimagenet": tmp_path / "sources" / "miniimagenet",
        "clevr": tmp_path / "sources" / "clevr" / "CLEVR_v1.0",
    }
    mini = read_miniimagenet(paths["miniimagenet"])
    assert mini.layout == "flat"
    require_images_per_class(mini, "test", 6, why="open_mi")
    assert len(mini.classes("test")) >= 5 and len(mini.classes("train")) >= 2
    train = read_clevr_scenes(paths["clevr"], "train")
    val = read_clevr_scenes(paths["clevr"], "val")
    assert train and val
    assert not {s.image_path for s in train} & {s.image_path for s in val}


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    first = tree_hashes(write_vlicl_sample_sources(tmp_path / "a")["miniimagenet"].parent)
    again = tree_hashes(write_vlicl_sample_sources(tmp_path / "b")["miniimagenet"].parent)
    other = tree_hashes(write_vlicl_sample_sources(tmp_path / "c", seed=1)["miniimagenet"].parent)
    assert first == again
    assert first != other
