"""Text variants: the image tasks' items in words, checked against the sources by other routes
(the CLEVR answer recounted from the words alone, the operator words drawn again and compared
with the published image), the same episodes, loading, removal with the image twin, and the
original scorer's rules under the original's names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import datasets
import pytest
from vlicl_fixtures import build_sample_vlicl

from benchsmith.builders.vlicl.config import VliclConfig
from benchsmith.builders.vlicl.leakage import check_vlicl_leakage, remove_image_twins
from benchsmith.builders.vlicl.operator_images import load_operator_font, render_text
from benchsmith.builders.vlicl.publication import VliclPublication
from benchsmith.builders.vlicl.text_variants import TEXT_VARIANTS, legacy_name
from benchsmith.core.errors import BenchsmithError
from benchsmith.publish.publisher import publish
from benchsmith.scoring.vlicl_normalise import matcher

ATTRIBUTES = ("size", "color", "material", "shape")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("vlicl_text")
    build, sources = build_sample_vlicl(root)
    check_vlicl_leakage(build)
    out = root / "published"
    publish(VliclPublication(build), out, "1.0.0")
    return {"build": build, "sources": sources, "out": out}


def rows(build: Path, task: str, split: str) -> list[dict]:
    path = build / "tasks" / task / f"{split}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_variant_holds_its_image_tasks_items_answers_and_columns(built):
    for variant, (base, form) in TEXT_VARIANTS.items():
        for split in ("support", "query"):
            twins = {r["id"]: r for r in rows(built["build"], base, split)}
            mine = rows(built["build"], variant, split)
            assert [r["extras"]["image_twin"] for r in mine] == sorted(twins)
            for row in mine:
                twin = twins[row["extras"]["image_twin"]]
                assert row["id"] == twin["id"].replace(base, variant, 1)
                assert row["answer"] == twin["answer"] and row["task"] == variant
                extras = {k: v for k, v in row["extras"].items()
                          if k not in ("description", "image_twin")}  # fmt: skip
                assert extras == twin["extras"]
                if split == "query" and form == "image":
                    assert row["images"] == twin["images"] and row["question"] == twin["question"]
                else:
                    assert row["images"] == []
                    assert row["question"] == f"{row['extras']['description']}\n{twin['question']}"


def test_the_clevr_words_give_the_answer_by_themselves(built):
    """The count is recounted from the description's words, with no scene file and no image;
    and the words list the scene file's objects (read here as plain JSON)."""
    scenes = {}
    for split in ("train", "val"):
        path = Path(built["sources"]["clevr"]) / "scenes" / f"CLEVR_{split}_scenes.json"
        scenes[split] = {s["image_index"]: s for s in json.loads(path.read_text())["scenes"]}
    checked = 0
    for split in ("support", "query"):
        for row in rows(built["build"], "clevr_text", split):
            words = re.fullmatch(
                r"The scene has (\d+) objects?: (.*)\.", row["extras"]["description"]
            )
            listed = [item.split(" ", 1)[1].split() for item in words.group(2).split("; ")]
            assert int(words.group(1)) == len(listed) and all(len(o) == 4 for o in listed)
            attribute, value = row["question"].splitlines()[-1].split(": ")
            position = ATTRIBUTES.index(attribute)
            assert sum(o[position] == value for o in listed) == int(row["answer"])
            scene = scenes[row["extras"]["source_split"]][row["extras"]["scene_index"]]
            assert listed == [[o[a] for a in ATTRIBUTES] for o in scene["objects"]]
            checked += 1
    assert checked == 36  # every support and query row of the sample


def test_the_operator_words_are_what_the_image_shows(built):
    """The words drawn again with the build's font give the published image, byte for byte."""
    font, identity = load_operator_font(None)  # the sample's font: Pillow's embedded one
    info = json.loads((built["build"] / "build_info.json").read_text())
    assert info["font"]["sha256"] == identity.sha256
    for row in rows(built["build"], "operator_induction_text", "support")[:10]:
        twin = rows(built["build"], "operator_induction", "support")[
            int(row["id"].rsplit("/", 1)[1])
        ]
        image = (built["build"] / "rendered" / twin["images"][0]["file"]).read_bytes()
        assert render_text(row["extras"]["description"], font) == image
    for row in rows(built["build"], "operator_induction_interleaved_text", "query")[:5]:
        a, b = re.fullmatch(r"First image: (\d)\. Second image: (\d)\.",
                            row["extras"]["description"]).groups()  # fmt: skip
        assert (int(a), int(b)) == (row["extras"]["a"], row["extras"]["b"])


def test_episodes_are_the_image_tasks_with_ids_mapped(built):
    episodes = [json.loads(line) for line in
                (built["build"] / "episodes.jsonl").read_text().splitlines()]  # fmt: skip
    by_task: dict[str, list[dict]] = {}
    for row in episodes:
        by_task.setdefault(row["task"], []).append(row)
    for variant, (base, _) in TEXT_VARIANTS.items():
        mine, theirs = by_task[variant], by_task[base]
        assert len(mine) == len(theirs) > 0
        for a, b in zip(mine, theirs, strict=True):
            assert a["query_id"] == b["query_id"].replace(base, variant, 1)
            assert a["demo_ids"] == [d.replace(base, variant, 1) for d in b["demo_ids"]]
            assert (a["demo_answers"], a["sampler"], a["seed"], a["n_shot"]) == (
                b["demo_answers"], b["sampler"], b["seed"], b["n_shot"])  # fmt: skip


def test_variants_load_and_their_demos_are_in_their_own_support(built):
    out = str(built["out"])
    assert set(TEXT_VARIANTS) <= set(datasets.get_dataset_config_names(out))
    episodes = datasets.load_dataset(out, "episodes", split="legacy")
    for variant, (_, form) in TEXT_VARIANTS.items():
        support = datasets.load_dataset(out, variant, split="support")
        query = datasets.load_dataset(out, variant, split="query")
        assert all(images == [] for images in support["images"])
        assert all((images != []) == (form == "image") for images in query["images"])
        ids = set(support["id"])
        mine = episodes.filter(lambda e, v=variant: e["task"] == v and e["n_shot"] > 0)
        assert mine.num_rows > 0 and all(set(d) <= ids for d in mine["demo_ids"])


def test_a_query_removed_from_the_image_task_leaves_its_variants():
    tasks = {
        "clevr": {"removed": ["clevr/query/00003"],
                  "removal_reasons": {"clevr/query/00003": ["EXACT_DUPLICATE_IMAGE_IN_SUPPORT"]}},
        "clevr_text": {"removed": [], "removal_reasons": {}},
        "clevr_text_image_query": {"removed": [], "removal_reasons": {}},
    }  # fmt: skip
    remove_image_twins(tasks)
    assert tasks["clevr_text"]["removed"] == ["clevr_text/query/00003"]
    assert tasks["clevr_text_image_query"]["removal_reasons"] == {
        "clevr_text_image_query/query/00003": ["IMAGE_TWIN_REMOVED"]
    }


def test_a_variant_needs_its_image_task_and_ingest_leaves_them_out():
    with pytest.raises(BenchsmithError, match=r"made from the rows of \['clevr'\]"):
        VliclConfig.from_params({"tasks": ["open_mi", "clevr_text"]}, "sample")
    assert not set(TEXT_VARIANTS) & set(VliclConfig.from_params({"mode": "ingest"}).tasks)
    with pytest.raises(BenchsmithError, match="ingest mode reads the release's image tasks"):
        VliclConfig.from_params({"mode": "ingest", "tasks": ["clevr", "clevr_text"]})


@pytest.mark.parametrize(
    ("task", "reply", "gold", "legacy", "fixed"),
    [
        # the original's scorer takes the first number under `clevr_simple_text` ...
        ("clevr_text", "3 objects", "3", True, True),
        ("clevr", "3 objects", "3", False, True),  # ... but not under `clevr`
        # ... and compares whole answers under `math_induction_text*`, so a sign can match
        ("operator_induction_text", "-5", "-5", True, True),
        ("operator_induction", "-5", "-5", False, True),
        ("operator_induction_interleaved_text", "The answer is 6", "6", False, True),
        ("operator_induction_text_image_query", "-5", "-5", False, True),  # its image task's
    ],
)
def test_the_legacy_scorer_follows_the_originals_names(task, reply, gold, legacy, fixed):
    assert matcher(task, "legacy")(reply, gold) is legacy
    assert matcher(task, "fixed")(reply, gold) is fixed
    assert legacy_name(task) in ("clevr_simple_text", "math_induction_text",
                                 "math_induction_text_interleaved", task)  # fmt: skip
