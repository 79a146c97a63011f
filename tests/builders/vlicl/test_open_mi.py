"""Fast Open MiniImageNet rows: episodes, words, query/support separation, bad input."""

from __future__ import annotations

import csv
import hashlib
import shutil
from collections import Counter
from pathlib import Path

import pytest
from vlicl_fixtures import shuffle_csv_rows

from benchsmith.builders.vlicl import ImageHashes
from benchsmith.builders.vlicl.config import NONSENSE_WORDS
from benchsmith.builders.vlicl.open_mi import build_open_mi
from benchsmith.core.errors import PlanError
from benchsmith.sources.miniimagenet.reader import read_miniimagenet
from benchsmith.sources.miniimagenet.sample import write_sample_miniimagenet


def _build(root: Path, *, episodes: int = 8, seed: int = 0, shots: int = 5):
    return build_open_mi(
        read_miniimagenet(root),
        episodes=episodes,
        ways=5,
        shots=shots,
        words=NONSENSE_WORDS,
        seed=seed,
        hashes=ImageHashes(),
    )


def _labels(root: Path, split: str) -> dict[str, str]:
    """filename -> label straight from the CSV (independent of the reader)."""
    with open(root / f"{split}.csv", newline="", encoding="utf-8") as handle:
        return {row["filename"]: row["label"] for row in csv.DictReader(handle)}


def _sha(root: Path, ref: dict) -> str:
    return hashlib.sha256((root / ref["file"]).read_bytes()).hexdigest()


@pytest.fixture()
def mini(tmp_path) -> Path:
    return write_sample_miniimagenet(tmp_path / "mini", images_per_class=10)


def test_episodes_follow_the_rebuild_rules(mini):
    result = _build(mini)
    test_labels = _labels(mini, "test")
    support = {row["id"]: row for row in result.support}
    assert len(result.query) == 8 and len(result.support) == 8 * 25
    for query in result.query:
        extras = query["extras"]
        words = extras["classes"]
        assert len(words) == 5 and len(set(words)) == 5  # drawn without replacement
        assert set(words) <= set(NONSENSE_WORDS)
        assert query["answer"] == extras["query_word"] in words
        labels = [entry["real_label"] for entry in extras["episode_support"]]
        assert len(set(labels)) == 5 and set(labels) <= set(test_labels.values())
        assert [entry["word"] for entry in extras["episode_support"]] == words
        query_file = Path(query["images"][0]["file"]).name
        assert test_labels[query_file] == extras["real_label"]
        assert extras["real_label"] == labels[words.index(extras["query_word"])]
        for entry in extras["episode_support"]:
            assert len(entry["image_ids"]) == 5
            files = [Path(support[i]["images"][0]["file"]).name for i in entry["image_ids"]]
            assert len(set(files)) == 5
            assert {test_labels[f] for f in files} == {entry["real_label"]}
            for shot, image_id in enumerate(entry["image_ids"]):
                row = support[image_id]
                assert row["answer"] == entry["word"] == row["extras"]["word"]
                assert row["extras"]["shot_index"] == shot
                assert row["extras"]["episode_id"] == extras["episode_id"]


def test_no_query_image_is_a_support_image_by_content(mini):
    result = _build(mini)
    support_shas = {_sha(mini, ref) for row in result.support for ref in row["images"]}
    query_shas = [_sha(mini, row["images"][0]) for row in result.query]
    assert not support_shas & set(query_shas)
    assert len(set(query_shas)) == len(query_shas)
    for row in result.support + result.query:  # recorded hashes are the files' hashes
        assert row["images"][0]["sha256"] == _sha(mini, row["images"][0])
        assert row["sources"][0]["sha256"] == row["images"][0]["sha256"]


def test_query_classes_are_balanced(mini):
    result = _build(mini, episodes=13)
    counts = Counter(row["extras"]["real_label"] for row in result.query)
    assert len(counts) == 6 and max(counts.values()) - min(counts.values()) <= 1


def test_same_seed_same_rows_and_csv_order_does_not_matter(mini, tmp_path):
    first = _build(mini)
    again = _build(mini)
    assert first.support == again.support and first.query == again.query
    shuffled = shuffle_csv_rows(mini, tmp_path / "shuffled", ("train", "val", "test"), seed=7)
    moved = _build(shuffled)
    assert moved.support == first.support and moved.query == first.query
    other_seed = _build(mini, seed=1)
    assert other_seed.query != first.query


def test_byte_copies_of_query_images_are_never_support(mini):
    """Give every class a byte copy of each of its images under a new name; the copies of the
    query images must be skipped as support, whatever they are called."""
    with open(mini / "test.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    with open(mini / "test.csv", "a", encoding="utf-8") as handle:
        for row in rows:
            copy_name = row["filename"].replace(".jpg", "") + "9.jpg"
            shutil.copyfile(mini / "images" / row["filename"], mini / "images" / copy_name)
            handle.write(f"{copy_name},{row['label']}\n")
    result = _build(mini)
    support_shas = {row["images"][0]["sha256"] for row in result.support}
    assert not support_shas & {row["images"][0]["sha256"] for row in result.query}
    assert result.stats["support_candidates_skipped_as_query_copies"] > 0


def test_too_few_images_names_the_class_and_folder(tmp_path):
    root = write_sample_miniimagenet(tmp_path / "thin", images_per_class=5)
    with pytest.raises(PlanError) as info:
        _build(root)
    message = str(info.value)
    test_classes = set(_labels(root, "test").values())
    assert any(f"class {label}" in message for label in test_classes)
    assert "test.csv" in message and str(root) in message
    assert "fix:" in message


def test_too_few_classes_is_a_plan_error(tmp_path):
    root = write_sample_miniimagenet(
        tmp_path / "narrow", classes_per_split={"train": 2, "val": 1, "test": 4}
    )
    with pytest.raises(PlanError, match="4 classes but an episode needs 5"):
        _build(root)
