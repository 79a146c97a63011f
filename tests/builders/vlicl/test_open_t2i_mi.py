"""``open_t2i_mi``: text-to-image episodes whose gold names are checked against the pixels, with
legacy episodes replayed as the original's text-to-image evaluation draws them (its predict,
judge and score loop: ``test_t2i_loop.py``)."""

from __future__ import annotations

import colorsys
import json
import random
from pathlib import Path

import pytest
from PIL import Image
from vlicl_fixtures import build_sample_vlicl

from benchsmith.core.errors import SourceError
from benchsmith.sources.miniimagenet.class_names import (
    SYNSET_FILE,
    TEST_CLASS_NAMES,
    class_name,
    class_names,
    read_synset_names,
)

HUES = {"red": (0, 15), "orange": (15, 45), "yellow": (45, 70), "green": (70, 160),
        "cyan": (160, 200), "blue": (200, 250), "purple": (250, 290), "magenta": (290, 345)}  # fmt: skip


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("vlicl_t2i")
    build, sources = build_sample_vlicl(root)
    return {"build": build, "sources": sources}


def rows(build: Path, split: str) -> list[dict]:
    path = build / "tasks" / "open_t2i_mi" / f"{split}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def ground_colour(path: Path) -> str:
    """The colour word of an image's ground, from its border pixels' mean hue."""
    image = Image.open(path).convert("RGB")
    w, h = image.size
    border = [image.getpixel((x, y)) for x in range(w) for y in (0, 1, h - 2, h - 1)]
    mean = [sum(p[i] for p in border) / len(border) / 255 for i in range(3)]
    hue = colorsys.rgb_to_hsv(*mean)[0] * 360
    return next((word for word, (low, high) in HUES.items() if low <= hue < high), "red")


def test_each_gold_is_the_name_of_what_the_class_images_show(built):
    """A query's answer names its class; the class's support images show that colour (read
    from the pixels) and come from that class's files; the query has no image."""
    mini = Path(built["sources"]["miniimagenet"])
    names = read_synset_names(mini / SYNSET_FILE)
    support = {r["id"]: r for r in rows(built["build"], "support")}
    queries = rows(built["build"], "query")
    assert len(queries) == 8
    for query in queries:
        extras = query["extras"]
        assert query["images"] == [] and query["question"] == f"Generate a {extras['query_word']}"
        assert query["answer"] == names[extras["real_label"]] == extras["class_name"]
        assert len(set(extras["classes"])) == 5 and extras["query_word"] in extras["classes"]
        for entry in extras["episode_support"]:
            assert len(entry["image_ids"]) == 5
            for image_id in entry["image_ids"]:
                row = support[image_id]
                assert row["question"] == f"Generate a {entry['word']}"
                assert row["extras"]["real_label"] == entry["real_label"]
                source = row["sources"][0]
                assert Path(source["file"]).name.startswith(entry["real_label"])
                colour = names[entry["real_label"]].rsplit(" on ", 1)[1]
                assert ground_colour(mini / source["file"]) == colour, image_id


def test_legacy_episodes_replay_the_original_text_to_image_draws(built):
    """Seeded once, shots in list order, queries in file order: per query one choice of the
    other class among the query's classes and one coin for their order; shot i takes the i-th
    stored image of each class, in that order."""
    queries = rows(built["build"], "query")
    episodes = [json.loads(line) for line in (built["build"] / "episodes.jsonl").read_text()
                .splitlines()]  # fmt: skip
    legacy = {(e["seed"], e["n_shot"], e["query_id"]): e for e in episodes
              if e["task"] == "open_t2i_mi" and e["sampler"] == "legacy"}  # fmt: skip
    assert len(legacy) == 3 * 5 * len(queries)
    for seed in (0, 1, 2):
        stream = random.Random(seed)
        for n_shot in (0, 1, 2, 4, 5):
            for query in queries:
                word = query["extras"]["query_word"]
                other = stream.choice([w for w in query["extras"]["classes"] if w != word])
                order = [word, other] if stream.choice([True, False]) else [other, word]
                stored = {e["word"]: e["image_ids"] for e in query["extras"]["episode_support"]}
                expected = [stored[key][i] for i in range(n_shot) for key in order]
                episode = legacy[(seed, n_shot, query["id"])]
                assert episode["demo_ids"] == expected
                assert episode["demo_answers"] == [k for _ in range(n_shot) for k in order]


def test_class_names_come_from_imagenets_file_or_the_test_classes():
    assert TEST_CLASS_NAMES["n04146614"] == "school bus" and len(TEST_CLASS_NAMES) == 20


def test_a_bad_or_missing_name_names_the_file(tmp_path):
    (tmp_path / SYNSET_FILE).write_text("n01440764 tench, Tinca tinca\nn0144 \n")
    with pytest.raises(SourceError, match="line 2 is not") as info:
        class_names(tmp_path)
    assert str(tmp_path / SYNSET_FILE) in str(info.value)
    (tmp_path / SYNSET_FILE).write_text("n01440764 tench, Tinca tinca\n")
    names = class_names(tmp_path)
    assert names["n01440764"] == "tench" and names["n02129165"] == "lion"
    with pytest.raises(SourceError, match="n09999999 has no name") as info:
        class_name(names, "n09999999", tmp_path)
    assert SYNSET_FILE in str(info.value)
