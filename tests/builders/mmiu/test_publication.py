"""Publishing MMIU: ScanNet images as references (licence-safe) or embedded, rehydration from
the user's own ScanNet copy with every sha256 checked, the circular config, and the gate."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import datasets
import pytest
from PIL import Image

from benchsmith.builders.mmiu.config import SCANNET_TASKS, TASKS, ShortcutGate
from benchsmith.builders.mmiu.publication import MmiuPublication
from benchsmith.builders.mmiu.rehydrate import rehydrate as rehydrate_request
from benchsmith.builders.mmiu.shortcuts import check_plan
from benchsmith.core.errors import BenchsmithError, SourceError
from benchsmith.core.executor import ExecutorConfig
from benchsmith.core.hashing import sha256_bytes
from benchsmith.hf.image_names import neutral_image_name
from benchsmith.publish.publisher import publish


@pytest.fixture(scope="module")
def checked_plan(mmiu_plan, tmp_path_factory) -> Path:
    plan = Path(shutil.copytree(mmiu_plan, tmp_path_factory.mktemp("checked") / "plan"))
    check_plan(plan, ShortcutGate(), plan.parent / "shortcuts.json")
    return plan


@pytest.fixture(scope="module")
def referenced(checked_plan, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("published") / "mmiu"
    publish(MmiuPublication(checked_plan), out, "1.0.0")
    return out


@pytest.fixture(scope="module")
def embedded(checked_plan, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("published") / "mmiu"
    publish(MmiuPublication(checked_plan, scannet_images="embed"), out, "1.0.0")
    return out


def load(folder: Path, config: str) -> datasets.Dataset:
    return datasets.load_dataset(str(folder), config, split="test").cast_column(
        "images", datasets.List(datasets.Image(decode=False))
    )


def test_scannet_images_are_references_and_coco_images_are_embedded(referenced):
    info = json.loads((referenced / "build_info.json").read_text())
    assert info["scannet_images"] == "reference"
    for task in TASKS:
        for row in load(referenced, task):
            assert len(row["images"]) == len(row["image_refs"]) == row["num_images"]
            if task in SCANNET_TASKS:
                assert row["images"] == [None] * row["num_images"]
                assert all(ref["scene"] and len(ref["sha256"]) == 64 for ref in row["image_refs"])
            else:
                for image, ref in zip(row["images"], row["image_refs"], strict=True):
                    assert sha256_bytes(image["bytes"]) == ref["sha256"]
    card = (referenced / "README.md").read_text()
    assert "Rehydrating the ScanNet images" in card and "ScanNet Terms of Use" in card


def rehydrate(dataset: Path, scannet: Path, out: Path) -> None:
    """What ``benchsmith build mmiu rehydrate`` does: the step's request, written by the one
    publisher."""
    request = rehydrate_request(dataset, scannet, out)
    publish(request.publication, request.out, request.version, request.max_shard_mb)


def test_rehydrating_gives_the_embedded_dataset(referenced, embedded, mmiu_sources, tmp_path):
    out = tmp_path / "local"
    rehydrate(referenced, mmiu_sources.scannet, out)
    info = json.loads((out / "build_info.json").read_text())
    assert info["scannet_images"] == "embed" and info["rehydrated_from"]["version"] == "1.0.0"
    for task in (*TASKS, "circular"):
        ours, theirs = load(out, task), load(embedded, task)
        assert ours.num_rows == theirs.num_rows
        for a, b in zip(ours, theirs, strict=True):
            assert [i["bytes"] for i in a["images"]] == [i["bytes"] for i in b["images"]]
            names = [i["path"] for i in a["images"]]
            assert names == [i["path"] for i in b["images"]]  # by content, never by frame
            assert names == [neutral_image_name(i["bytes"], i["path"][-3:]) for i in a["images"]]
            assert {k: v for k, v in a.items() if k != "images"} == {
                k: v for k, v in b.items() if k != "images"
            }


def test_rehydrating_from_another_copy_names_the_frame(referenced, mmiu_sources, tmp_path):
    wrong = Path(shutil.copytree(mmiu_sources.scannet, tmp_path / "ScanNet"))
    scans = wrong / "scans"
    (scans / "scene0000_00" / "scene0000_00.sens").write_bytes(
        (scans / "scene0001_00" / "scene0001_00.sens").read_bytes()
    )
    with pytest.raises(SourceError, match=r"scene0000_00 frame \d+ renders to other bytes"):
        rehydrate(referenced, wrong, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    with pytest.raises(BenchsmithError, match="no scans/ folder"):
        rehydrate(referenced, tmp_path, tmp_path / "out")


def test_circular_rotates_every_item_and_keeps_its_gold(referenced):
    circular = load(referenced, "circular")
    by_item: dict[str, list[dict]] = {}
    for row in circular:
        by_item.setdefault(row["item_id"], []).append(row)
    for task in TASKS:
        for item in load(referenced, task):
            rotations = by_item[item["id"]]
            assert [r["rotation"] for r in rotations] == list(range(item["num_options"]))
            letters = {r["answer"] for r in rotations}
            assert len(letters) == item["num_options"]  # the gold visits every letter
            gold_text = item["options"][item["answer_index"]]
            for r in rotations:
                if item["options"][0].startswith("Image"):  # image options: the image moves
                    first = item["num_images"] - item["num_options"]
                    gold = item["image_refs"][first + item["answer_index"]]
                    assert r["image_refs"][first + r["answer_index"]] == gold
                elif not item["options"][0].startswith("Point"):
                    assert r["options"][r["answer_index"]] == gold_text
                assert r["context"].endswith(f"{r['answer']}: {r['options'][r['answer_index']]}"
                                             ) or f"\n{r['answer']}: " in r["context"]  # fmt: skip


def test_publish_needs_a_current_passing_report(mmiu_plan, checked_plan, tmp_path):
    with pytest.raises(BenchsmithError, match="no shortcut report"):
        MmiuPublication(mmiu_plan, tmp_path / "absent.json")
    stale = Path(shutil.copytree(checked_plan, tmp_path / "plan"))
    shutil.copy(checked_plan.parent / "shortcuts.json", tmp_path / "shortcuts.json")
    items = stale / "items" / "jigsaw_puzzle_solving.jsonl"
    items.write_text(items.read_text().replace('"answer":"A"', '"answer":"B"', 1))
    with pytest.raises(BenchsmithError, match="made for another plan"):
        MmiuPublication(stale)
    with pytest.raises(BenchsmithError, match="--scannet-images"):
        MmiuPublication(checked_plan, scannet_images="bytes")


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}  # fmt: skip


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_images_rendered_on_any_executor_publish_the_same_bytes(
    executor, request, checked_plan, embedded, tmp_path_factory
):
    if executor == "ray":
        request.getfixturevalue("ray_cluster")
    out = tmp_path_factory.mktemp(f"published_{executor}") / "mmiu"  # the depth of `embedded`
    publication = MmiuPublication(checked_plan, scannet_images="embed",
                                  executor=ExecutorConfig(executor, 2))  # fmt: skip
    publish(publication, out, "1.0.0")
    assert tree_bytes(out) == tree_bytes(embedded)  # every shard, build_info, card, croissant


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_a_changed_source_on_a_worker_names_it_and_keeps_the_last_publish(
    executor, request, checked_plan, mmiu_sources, tmp_path
):
    if executor == "ray":
        request.getfixturevalue("ray_cluster")
    coco = Path(shutil.copytree(mmiu_sources.coco, tmp_path / "coco"))
    rows = [json.loads(line) for line in
            (checked_plan / "items" / "jigsaw_puzzle_solving.jsonl").read_text().splitlines()]  # fmt: skip
    changed = coco / "val2014" / rows[5]["images"][0]["file"]
    with Image.open(changed) as image:  # a valid JPEG with other pixels, same file name
        image.convert("RGB").save(changed, "JPEG", quality=40)
    out = tmp_path / "published"
    publish(MmiuPublication(checked_plan), out, "1.0.0")
    before = tree_bytes(out)
    publication = MmiuPublication(checked_plan, roots_override={"coco": str(coco)},
                                  executor=ExecutorConfig(executor, 2))  # fmt: skip
    with pytest.raises(SourceError) as raised:
        publish(publication, out, "1.0.0")
    assert raised.value.path == str(changed) and "renders to other bytes" in str(raised.value)
    assert tree_bytes(out) == before
