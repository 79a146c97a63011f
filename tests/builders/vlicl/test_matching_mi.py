"""Matching MiniImageNet pairs: balance, labels, disjoint classes, exclusions, bad input."""

from __future__ import annotations

import csv
import hashlib
from pathlib import Path

import pytest
from vlicl_fixtures import shuffle_csv_rows

from benchsmith.builders.vlicl import ImageHashes
from benchsmith.builders.vlicl.matching_mi import assert_disjoint_classes, build_matching_mi
from benchsmith.core.errors import PlanError
from benchsmith.sources.miniimagenet.reader import read_miniimagenet
from benchsmith.sources.miniimagenet.sample import write_sample_miniimagenet


def _build(root: Path, *, support: int = 16, query: int = 8, seed: int = 0, exclude=frozenset()):
    return build_matching_mi(
        read_miniimagenet(root),
        support_pairs=support,
        query_pairs=query,
        seed=seed,
        hashes=ImageHashes(),
        exclude_sha256=exclude,
    )


def _labels(root: Path, split: str) -> dict[str, str]:
    with open(root / f"{split}.csv", newline="", encoding="utf-8") as handle:
        return {row["filename"]: row["label"] for row in csv.DictReader(handle)}


@pytest.fixture()
def mini(tmp_path) -> Path:
    return write_sample_miniimagenet(tmp_path / "mini")


def test_pairs_are_balanced_and_labelled_by_class(mini):
    result = _build(mini, support=40, query=20)
    for rows, split in ((result.support, "train"), (result.query, "test")):
        labels = _labels(mini, split)
        answers = [row["answer"] for row in rows]
        assert answers.count("Yes") == answers.count("No") == len(rows) // 2
        for row in rows:
            files = [Path(ref["file"]).name for ref in row["images"]]
            assert len(files) == 2 and all(f in labels for f in files)  # from the right CSV
            same = labels[files[0]] == labels[files[1]]
            assert row["answer"] == ("Yes" if same else "No")
            assert row["extras"]["label"] == ("same" if same else "different")
            assert [row["extras"]["class_a"], row["extras"]["class_b"]] == [
                labels[f] for f in files
            ]
            assert row["images"][0]["sha256"] != row["images"][1]["sha256"]
        groups = {}
        for row in rows:
            groups.setdefault(row["extras"]["group_id"], []).append(row["extras"]["label"])
        assert all(sorted(v) == ["different", "same"] for v in groups.values())


def test_support_and_query_classes_are_disjoint(mini):
    result = _build(mini)
    support_classes = {r["extras"][k] for r in result.support for k in ("class_a", "class_b")}
    query_classes = {r["extras"][k] for r in result.query for k in ("class_a", "class_b")}
    assert support_classes and query_classes and not support_classes & query_classes
    leaky = [dict(result.query[0], extras=dict(result.query[0]["extras"]))]
    leaky[0]["extras"]["class_a"] = result.support[0]["extras"]["class_a"]
    with pytest.raises(PlanError, match="share classes"):
        assert_disjoint_classes(result.support, leaky)


def test_excluded_images_are_never_used(mini):
    test_images = sorted((mini / "images").glob("*.jpg"))
    test_labels = _labels(mini, "test")
    excluded = {
        hashlib.sha256(p.read_bytes()).hexdigest() for p in test_images if p.name in test_labels
    }
    excluded = set(sorted(excluded)[: len(excluded) // 2])
    result = _build(mini, exclude=frozenset(excluded))
    used = {ref["sha256"] for row in result.query for ref in row["images"]}
    assert used and not used & excluded
    assert result.stats["redrawn_images"] > 0


def test_deterministic_and_independent_of_csv_order(mini, tmp_path):
    first = _build(mini)
    assert _build(mini).support == first.support
    shuffled = shuffle_csv_rows(mini, tmp_path / "shuffled", ("train", "test"), seed=3)
    moved = _build(shuffled)
    assert (moved.support, moved.query) == (first.support, first.query)
    assert _build(mini, seed=5).support != first.support


def test_class_with_one_image_names_the_class(tmp_path):
    root = write_sample_miniimagenet(tmp_path / "thin", images_per_class=1)
    with pytest.raises(PlanError) as info:
        _build(root)
    message = str(info.value)
    assert "train.csv" in message and "needs 2" in message
    assert any(f"class {label}" in message for label in _labels(root, "train").values())
