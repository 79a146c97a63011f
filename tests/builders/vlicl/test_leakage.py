"""VL-ICL leakage stage on hand-made build folders (pinning the build contract) and a real build.

The hand-made folder follows ``notes/vlicl_plan_format.md`` exactly: build_info.json with
roots, tasks/<task>/{support,query}.jsonl, episodes.jsonl, rendered/ images.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageEnhance
from vlicl_fixtures import build_sample_vlicl

from benchsmith.builders.vlicl.leakage import check_vlicl_leakage
from benchsmith.builders.vlicl.text_variants import TEXT_VARIANTS
from benchsmith.core.errors import BenchsmithError, SourceError


def photo(seed: int, size: int = 64) -> Image.Image:
    """A textured image: distinct seeds give pHashes far apart (unlike flat colours)."""
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, size=(8, 8, 3), dtype=np.uint8)
    return Image.fromarray(small).resize((size, size), Image.Resampling.BICUBIC)


def encode(image: Image.Image, fmt: str = "PNG") -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, fmt, **({"quality": 95} if fmt == "JPEG" else {}))
    return buffer.getvalue()


class HandBuild:
    """Writes images under roots and rows/episodes in the contract's format."""

    def __init__(self, root: Path):
        self.root = root
        self.build = root / "build"
        self.images = root / "images"
        self.images.mkdir(parents=True)
        self.rows: dict[tuple[str, str], list[dict]] = {}
        self.episodes: list[dict] = []

    def image(self, name: str, data: bytes) -> dict:
        (self.images / name).write_bytes(data)
        return {"root": "miniimagenet", "file": name, "sha256": hashlib.sha256(data).hexdigest()}

    def rendered(self, task: str, name: str, data: bytes) -> dict:
        path = self.build / "rendered" / task / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return {
            "root": "rendered",
            "file": f"{task}/{name}",
            "sha256": hashlib.sha256(data).hexdigest(),
        }

    def row(self, task: str, split: str, n: int, images: list[dict], answer: str, extras: dict):
        self.rows.setdefault((task, split), []).append(
            {
                "id": f"{task}/{split}/{n:05d}",
                "task": task,
                "split": split,
                "images": images,
                "question": "q",
                "answer": answer,
                "extras": extras,
                "sources": [],
            }
        )

    def write(self) -> Path:
        tasks = sorted({t for t, _ in self.rows})
        for (task, split), rows in self.rows.items():
            path = self.build / "tasks" / task / f"{split}.jsonl"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(
                "".join(json.dumps(r) + "\n" for r in sorted(rows, key=lambda r: r["id"]))
            )
        (self.build / "episodes.jsonl").write_text(
            "".join(json.dumps(e) + "\n" for e in self.episodes)
        )
        info = {
            "family": "vlicl",
            "mode": "rebuild",
            "builder_version": "test",
            "params": {},
            "params_hash": "0" * 64,
            "seed": 0,
            "roots": {
                "miniimagenet": str(self.images),
                "clevr": None,
                "rendered": "rendered",
                "ingest": None,
            },
            "font": None,
            "sources_digest": {},
            "counts": {
                t: {s: len(self.rows.get((t, s), [])) for s in ("support", "query")} for t in tasks
            },
            "choices": [],
        }
        (self.build / "build_info.json").write_text(json.dumps(info))
        return self.build


def match_extras(group: int, same: bool, a: str, b: str) -> dict:
    return {"group_id": group, "label": "same" if same else "different", "class_a": a, "class_b": b}


def operator_extras(a: int, b: int, op: str | None) -> dict:
    return {
        "a": a,
        "b": b,
        "answers_by_op": {"plus": a + b, "minus": a - b, "times": a * b},
        "operator": op,
    }


@pytest.fixture()
def hand(tmp_path) -> HandBuild:
    return HandBuild(tmp_path)


def test_exact_and_near_duplicates_between_support_and_query_are_removed(hand):
    support = [hand.image(f"s{k}.png", encode(photo(k))) for k in range(4)]
    for k, ref in enumerate(support):
        hand.row("clevr", "support", k, [ref], "1", {})
    brighter = ImageEnhance.Brightness(photo(1)).enhance(1.2)  # same picture, re-encoded as JPEG
    queries = [
        hand.image("q_exact.png", encode(photo(0))),  # other file, same pixels as s0
        hand.image("q_near.jpg", encode(brighter, "JPEG")),
        hand.image("q_clean.png", encode(photo(99))),
    ]
    for k, ref in enumerate(queries):
        hand.row("clevr", "query", k, [ref], "1", {})
    report = check_vlicl_leakage(hand.write(), threshold=6)
    task = report["tasks"]["clevr"]
    assert [(e["query_ids"], e["support_ids"]) for e in task["exact_support_query"]] == [
        (["clevr/query/00000"], ["clevr/support/00000"])
    ]
    near = task["near_support_query"]
    assert [(e["query_image"], e["support_image"]) for e in near] == [
        ("miniimagenet/q_near.jpg", "miniimagenet/s1.png")
    ]
    assert 0 < near[0]["distance"] <= 6
    assert task["removed"] == ["clevr/query/00000", "clevr/query/00001"]
    assert task["removal_reasons"]["clevr/query/00001"] == ["NEAR_DUPLICATE_IMAGE_IN_SUPPORT"]
    written = json.loads((hand.build.parent / "leakage.json").read_text())
    assert written == report and written["summary"]["removed_queries"] == 2
    # below the brightened copy's distance only the pixel-identical duplicate is left
    strict = check_vlicl_leakage(hand.build, threshold=near[0]["distance"] - 1)["tasks"]["clevr"]
    assert strict["removed"] == ["clevr/query/00000"] and strict["near_support_query"] == []


def test_matching_classes_must_be_disjoint(hand):
    pairs = {"support": [("n1", "n1"), ("n1", "n2")], "query": [("n3", "n3"), ("n3", "n2")]}
    for split, first_seed in (("support", 0), ("query", 50)):
        for k, (a, b) in enumerate(pairs[split]):
            refs = [
                hand.image(f"{split[0]}{k}{i}.png", encode(photo(first_seed + 10 * k + i)))
                for i in range(2)
            ]
            same = a == b
            hand.row(
                "matching_mi", split, k, refs, "Yes" if same else "No", match_extras(0, same, a, b)
            )
    task = check_vlicl_leakage(hand.write())["tasks"]["matching_mi"]
    assert task["class_overlap"] == ["n2"] and task["classes"]["must_be_disjoint"]
    assert task["removed"] == ["matching_mi/query/00001"]
    assert task["removal_reasons"] == {"matching_mi/query/00001": ["CLASS_IN_SUPPORT"]}


def operator_task(hand: HandBuild, task: str) -> None:
    """Support (1,2), (3,4); queries (1,2) [shares support's expression] and (5,6)."""

    def refs(a: int, b: int) -> list[dict]:
        if task == "operator_induction_interleaved":  # one file per digit, shared by design
            return [hand.rendered(task, f"operand_{v}.png", encode(photo(v))) for v in (a, b)]
        return [hand.rendered(task, f"expression_{a}_{b}.png", encode(photo(10 * a + b)))]

    for k, (a, b) in enumerate([(1, 2), (3, 4)]):
        hand.row(task, "support", k, refs(a, b), str(a + b), operator_extras(a, b, None))
    for k, (a, b, op) in enumerate([(1, 2, "x"), (5, 6, "+")]):
        hand.row(
            task,
            "query",
            k,
            refs(a, b),
            str(a * b if op == "x" else a + b),
            operator_extras(a, b, op),
        )
    support_ids = [f"{task}/support/0000{k}" for k in range(2)]
    for sampler, demos in (("hashed", support_ids[1:]), ("legacy", support_ids)):
        for query in ("00000", "00001"):
            hand.episodes.append(
                {
                    "task": task,
                    "sampler": sampler,
                    "seed": 0,
                    "n_shot": len(demos),
                    "query_id": f"{task}/query/{query}",
                    "demo_ids": demos,
                    "demo_answers": ["0"] * len(demos),
                    "extras": {},
                }
            )


@pytest.mark.parametrize("task", ["operator_induction", "operator_induction_interleaved"])
def test_operator_expression_overlap_and_revealing_episodes(hand, task):
    operator_task(hand, task)
    report = check_vlicl_leakage(hand.write())["tasks"][task]
    overlap = report["expression_overlap"]
    assert overlap["shared_expressions"] == [[1, 2]]
    assert overlap["queries_with_support_expression"] == [f"{task}/query/00000"]
    # legacy shows support (1, 2) to query (1, 2); hashed never does
    assert overlap["revealing"] == {"hashed": 0, "legacy": 1}
    assert overlap["episodes"] == {"hashed": 2, "legacy": 2}
    # identical renders (same expression) are the shared image; operand images alone are not
    assert report["removed"] == [f"{task}/query/00000"]
    assert report["removal_reasons"][f"{task}/query/00000"] == ["EXACT_DUPLICATE_IMAGE_IN_SUPPORT"]
    assert report["near_support_query"] == []


def test_a_changed_or_missing_source_image_names_the_file(hand):
    ref = hand.image("s0.png", encode(photo(0)))
    hand.row("clevr", "support", 0, [ref], "1", {})
    hand.row("clevr", "query", 0, [hand.image("q0.png", encode(photo(1)))], "1", {})
    build = hand.write()
    (hand.images / "s0.png").write_bytes(encode(photo(2)))
    with pytest.raises(SourceError) as info:
        check_vlicl_leakage(build)
    assert str(hand.images / "s0.png") in str(info.value) and "changed since the build" in str(
        info.value
    )
    (hand.images / "s0.png").unlink()
    with pytest.raises(SourceError, match="missing"):
        check_vlicl_leakage(build)
    assert not (build.parent / "leakage.json").exists()


def test_bad_inputs_are_user_errors(hand, tmp_path):
    with pytest.raises(BenchsmithError, match="no build_info.json"):
        check_vlicl_leakage(tmp_path / "nowhere")
    hand.row("clevr", "support", 0, [hand.image("s0.png", encode(photo(0)))], "1", {})
    hand.row("clevr", "query", 0, [hand.image("q0.png", encode(photo(1)))], "1", {})
    build = hand.write()
    with pytest.raises(BenchsmithError, match="0..64"):
        check_vlicl_leakage(build, threshold=65)
    with open(build / "tasks" / "clevr" / "query.jsonl", "a") as handle:
        handle.write("{not json\n")
    with pytest.raises(BenchsmithError, match="line 2 is not valid JSON") as info:
        check_vlicl_leakage(build)
    assert str(build / "tasks" / "clevr" / "query.jsonl") in str(info.value)


def test_real_sample_build_has_no_exact_leaks_and_a_planted_one_is_found(tmp_path):
    build, sources = build_sample_vlicl(tmp_path)
    report = check_vlicl_leakage(build)
    tasks = report["tasks"]
    assert set(tasks) == {
        "open_mi",
        "matching_mi",
        "clevr",
        "operator_induction",
        "operator_induction_interleaved",
        "open_t2i_mi",
        "textocr",
        *TEXT_VARIANTS,
        "cobsat",
        "fast_count_t2i",
        "fast_attr_t2i",
    }
    assert report["summary"]["exact_pairs"] == 0  # the builder excludes byte copies itself
    assert tasks["matching_mi"]["class_overlap"] == []
    assert all(
        tasks[t]["expression_overlap"]["revealing"]["hashed"] == 0
        for t in ("operator_induction", "operator_induction_interleaved")
    )
    # plant: a clevr query now shows a support scene's image under another file name
    support = json.loads((build / "tasks/clevr/support.jsonl").read_text().splitlines()[3])
    source = Path(sources["clevr"]) / support["images"][0]["file"]
    copy = Path(sources["clevr"]) / "images" / "val" / "planted_copy.png"
    shutil.copyfile(source, copy)
    queries = (build / "tasks/clevr/query.jsonl").read_text().splitlines()
    planted = json.loads(queries[2])
    planted["images"] = [{**support["images"][0], "file": "images/val/planted_copy.png"}]
    queries[2] = json.dumps(planted)
    (build / "tasks/clevr/query.jsonl").write_text("\n".join(queries) + "\n")
    again = check_vlicl_leakage(build)
    clevr = again["tasks"]["clevr"]
    assert planted["id"] in clevr["removed"]
    assert [e["support_ids"] for e in clevr["exact_support_query"]] == [[support["id"]]]
    assert again["build_fingerprint"] != report["build_fingerprint"]
    # the same item in words leaves with it, in both forms
    for variant in ("clevr_text", "clevr_text_image_query"):
        twin = planted["id"].replace("clevr", variant, 1)
        assert again["tasks"][variant]["removed"] == [twin]
        assert again["tasks"][variant]["removal_reasons"][twin] == ["IMAGE_TWIN_REMOVED"]
    assert again["summary"]["removed_by_task"]["clevr_text"] == 1


def test_an_undecodable_image_is_a_source_error_naming_it(hand):
    hand.row("clevr", "support", 0, [hand.image("s0.png", b"not an image at all")], "1", {})
    hand.row("clevr", "query", 0, [hand.image("q0.png", encode(photo(1)))], "1", {})
    with pytest.raises(SourceError, match="cannot be decoded") as info:
        check_vlicl_leakage(hand.write())
    assert str(hand.images / "s0.png") in str(info.value)
