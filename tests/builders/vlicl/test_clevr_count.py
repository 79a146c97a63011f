"""CLEVR count induction rows: answers recounted from the scenes JSON, splits, order, errors."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from collections import Counter
from pathlib import Path

import pytest

from benchsmith.builders.vlicl import ImageHashes
from benchsmith.builders.vlicl.clevr_count import build_clevr
from benchsmith.core.errors import PlanError
from benchsmith.sources.clevr.reader import read_clevr_scenes
from benchsmith.sources.clevr.sample import write_sample_clevr


def _build(root: Path, n_support: int = 24, n_query: int = 12, seed: int = 0, scenes=None):
    train, val = scenes or (read_clevr_scenes(root, "train"), read_clevr_scenes(root, "val"))
    return build_clevr(
        train,
        val,
        n_support=n_support,
        n_query=n_query,
        seed=seed,
        root=root,
        hashes=ImageHashes(),
        scenes_sha256={"train": "t" * 64, "val": "v" * 64},
    )


def _raw_scenes(root: Path, split: str) -> dict[str, list[dict]]:
    """image_filename -> objects, read with json directly (not through the source reader)."""
    data = json.loads((root / "scenes" / f"CLEVR_{split}_scenes.json").read_text(encoding="utf-8"))
    return {scene["image_filename"]: scene["objects"] for scene in data["scenes"]}


@pytest.fixture()
def clevr(tmp_path) -> Path:
    return write_sample_clevr(tmp_path / "clevr", n_train=40, n_val=16)


def test_answers_equal_counts_recomputed_from_the_scene_json(clevr):
    result = _build(clevr, n_support=30, n_query=16)
    for rows, split in ((result.support, "train"), (result.query, "val")):
        raw = _raw_scenes(clevr, split)
        for row in rows:
            file = row["images"][0]["file"]
            assert file.startswith(f"images/{split}/CLEVR_{split}_")
            objects = raw[Path(file).name]
            attribute, value = row["question"].split(": ")
            expected = len([o for o in objects if o[attribute] == value])
            assert row["answer"] == str(expected) and expected >= 1
            extras = row["extras"]
            assert (extras["attribute"], extras["value"], extras["count"]) == (
                attribute,
                value,
                expected,
            )
            assert extras["source_split"] == split and extras["value_present"] is True
            assert extras["scene_index"] == int(Path(file).stem.rsplit("_", 1)[1])
            digest = hashlib.sha256((clevr / file).read_bytes()).hexdigest()
            assert row["images"][0]["sha256"] == digest


def test_every_attribute_is_asked(clevr):
    result = _build(clevr, n_support=40, n_query=16)
    asked = Counter(row["extras"]["attribute"] for row in result.support + result.query)
    assert set(asked) == {"size", "color", "material", "shape"}


def test_support_and_query_images_are_disjoint(clevr):
    result = _build(clevr)
    support = {row["images"][0]["file"] for row in result.support}
    query = {row["images"][0]["file"] for row in result.query}
    assert len(support) == 24 and len(query) == 12 and not support & query


def test_scene_order_does_not_matter(clevr, tmp_path):
    first = _build(clevr)
    train, val = read_clevr_scenes(clevr, "train"), read_clevr_scenes(clevr, "val")
    random.Random(1).shuffle(train)
    random.Random(2).shuffle(val)
    assert _build(clevr, scenes=(train, val)).support == first.support
    copy = tmp_path / "copy" / "CLEVR_v1.0"
    shutil.copytree(clevr, copy)
    path = copy / "scenes" / "CLEVR_train_scenes.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["scenes"].reverse()
    path.write_text(json.dumps(data), encoding="utf-8")
    moved = _build(copy)
    assert (moved.support, moved.query) == (first.support, first.query)
    assert _build(clevr, seed=9).support != first.support


def test_too_few_scenes_names_the_scenes_file(clevr):
    with pytest.raises(PlanError) as info:
        _build(clevr, n_support=41)
    assert "CLEVR_train_scenes.json" in str(info.value) and "41 are needed" in str(info.value)
