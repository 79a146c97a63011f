"""Ingest of the official release layout: both zip layouts, path resolution, safety, rows."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest
from archive_bombs import write_zip_bomb
from PIL import Image

from benchsmith.builders.vlicl import ImageHashes
from benchsmith.builders.vlicl.config import VliclConfig
from benchsmith.builders.vlicl.ingest import ImageResolver, ingest_task
from benchsmith.builders.vlicl.plan import VliclSources, build_vlicl
from benchsmith.core.errors import PlanError, SourceError

WORDS = ["dax", "blicket", "slation", "shously", "perpo"]
TASKS = ("open_mi", "matching_mi", "clevr", "operator_induction", "operator_induction_interleaved")


def _png(k: int) -> bytes:
    """A distinct tiny PNG per k."""
    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), ((37 * k) % 256, (91 * k) % 256, (13 * k + 5) % 256)).save(
        buffer, "PNG"
    )
    return buffer.getvalue()


class Release:
    """Writes ``ROOT/<task>/{support,query}.json`` and zips; images only inside the zips."""

    def __init__(self, root: Path, layout: str):
        self.root, self.layout = root, layout
        self.counter = 0

    def task(self, task: str, support: list[dict], query: list[dict], images: dict[str, bytes]):
        folder = self.root / task
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "support.json").write_text(json.dumps(support), encoding="utf-8")
        (folder / "query.json").write_text(json.dumps(query), encoding="utf-8")
        for split in ("support", "query"):
            with zipfile.ZipFile(folder / f"{split}.zip", "w") as archive:
                for path, data in sorted(images.items()):
                    relative = path.split("/", 1)[1]  # drop the task prefix of the JSON path
                    if not relative.startswith(split + "/"):
                        continue
                    name = relative if self.layout == "a" else f"{task}/{relative}"
                    archive.writestr(name, data)
                archive.writestr(f"{split}/notes.txt", "not an image")
                archive.writestr(f"{split}/cache.pkl", b"\x80\x04N.")  # never extracted or read

    def image(
        self, task: str, split: str, name: str, images: dict, data: bytes | None = None
    ) -> str:
        self.counter += 1
        path = f"{task}/{split}/{name}"
        images[path] = data if data is not None else _png(self.counter)
        return path


def write_release(root: Path, layout: str) -> Path:
    rel = Release(root, layout)
    # clevr: 4 support + 2 query, answers as ints
    images: dict[str, bytes] = {}
    support = [
        {
            "image": [rel.image("clevr", "support", f"CLEVR_train_{i:06d}.png", images)],
            "question": q,
            "answer": a,
        }
        for i, (q, a) in enumerate(
            [("color: red", 2), ("shape: cube", 3), ("size: small", 1), ("material: metal", 4)]
        )
    ]
    query = [
        {
            "image": [rel.image("clevr", "query", f"CLEVR_val_{i:06d}.png", images)],
            "question": q,
            "answer": a,
        }
        for i, (q, a) in enumerate([("color: blue", 2), ("shape: sphere", 5)])
    ]
    rel.task("clevr", support, query, images)
    # operator_induction: support answers [+, -, x]; query (3, 2) repeats a support expression,
    # query (2, 5) with '-' has a negative answer
    images = {}
    pairs = [(3, 2), (1, 4), (6, 6), (0, 9)]
    support = [
        {
            "image": [rel.image("operator_induction", "support", f"s{k}.png", images)],
            "question": "q",
            "answer": [a + b, a - b, a * b],
        }
        for k, (a, b) in enumerate(pairs)
    ]
    query = [
        {
            "image": [rel.image("operator_induction", "query", "3_x_2.png", images)],
            "question": "q",
            "operator": "x",
            "answer": 6,
        },
        {
            "image": [rel.image("operator_induction", "query", "2_m_5.png", images)],
            "question": "q",
            "operator": "-",
            "answer": -3,
        },
    ]
    rel.task("operator_induction", support, query, images)
    # interleaved: one digit per image
    images = {}
    support = [
        {
            "image": [
                rel.image("operator_induction_interleaved", "support", f"s{k}_{j}.png", images)
                for j in (0, 1)
            ],
            "question": "q",
            "answer": [a + b, a - b, a * b],
        }
        for k, (a, b) in enumerate(pairs)
    ]
    query = [
        {
            "image": [
                rel.image("operator_induction_interleaved", "query", f"{v}.png", images)
                for v in (1, 4)
            ],
            "question": "q",
            "operator": "+",
            "answer": 5,
        }
    ]
    rel.task("operator_induction_interleaved", support, query, images)
    # matching_mi: support entries hold a same and a diff pair
    images = {}
    question = "Do the two images satisfy the induced relationship?"
    support = [
        {
            "same": {
                "image": [
                    rel.image("matching_mi", "support", f"g{g}_{k}.png", images) for k in (0, 1)
                ],
                "question": question,
                "answer": "Yes",
            },
            "diff": {
                "image": [
                    rel.image("matching_mi", "support", f"g{g}_{k}.png", images) for k in (2, 3)
                ],
                "question": question,
                "answer": "No",
            },
        }
        for g in range(2)
    ]
    query = [
        {
            "image": [rel.image("matching_mi", "query", f"q{g}_{k}.png", images) for k in (0, 1)],
            "question": question,
            "answer": a,
        }
        for g, a in enumerate(["No", "Yes"])
    ]
    rel.task("matching_mi", support, query, images)
    # open_mi: each query stores its 5-way x 5-shot episode
    images = {}
    query = []
    for e in range(2):
        stored = {
            w: {
                "images": [
                    rel.image("open_mi", "support", f"e{e}_{w}_{i}.png", images) for i in range(5)
                ],
                "captions": [f"this is a {w}"] * 5,
                "real_name": f"class{c}",
            }
            for c, w in enumerate(WORDS)
        }
        query.append(
            {
                "image": [rel.image("open_mi", "query", f"e{e}.png", images)],
                "question": "This is a",
                "answer": WORDS[e + 1],
                "classes": WORDS,
                "support": stored,
            }
        )
    rel.task("open_mi", [], query, images)
    return root


@pytest.fixture(params=["a", "b"])
def release(request, tmp_path) -> Path:
    return write_release(tmp_path / "VL-ICL", request.param)


def _resolved(root: Path, ref: dict) -> bytes:
    return (root / ref["file"]).read_bytes()


def test_rows_keep_file_order_and_images_resolve(release):
    hashes = ImageHashes()
    clevr = ingest_task(release, "clevr", hashes)
    assert [r["id"] for r in clevr.support] == [f"clevr/support/{k:05d}" for k in range(4)]
    assert [r["answer"] for r in clevr.support] == ["2", "3", "1", "4"]
    assert clevr.query[1]["extras"] == {
        "attribute": "shape",
        "value": "sphere",
        "count": 5,
        "source_split": "val",
        "scene_index": 1,
        "value_present": True,
    }
    for row in clevr.support + clevr.query:
        (ref,) = row["images"]
        assert ref["root"] == "ingest"
        assert hashlib.sha256(_resolved(release, ref)).hexdigest() == ref["sha256"]
    extracted = {p.name for p in (release / "clevr").rglob("*") if p.is_file()}
    assert "notes.txt" not in extracted and "cache.pkl" not in extracted


def test_operator_operands_answers_and_negative_values(release):
    ops = ingest_task(release, "operator_induction", ImageHashes())
    assert [(r["extras"]["a"], r["extras"]["b"]) for r in ops.support] == [
        (3, 2),
        (1, 4),
        (6, 6),
        (0, 9),
    ]
    assert [r["answer"] for r in ops.support] == ["5", "5", "12", "9"]  # the + placeholder
    first, second = ops.query
    assert (first["extras"]["a"], first["extras"]["b"], first["extras"]["operator"]) == (3, 2, "x")
    assert second["answer"] == "-3" and second["extras"]["answers_by_op"]["minus"] == -3
    inter = ingest_task(release, "operator_induction_interleaved", ImageHashes())
    assert len(inter.query[0]["images"]) == 2 and (
        inter.query[0]["extras"]["a"],
        inter.query[0]["extras"]["b"],
    ) == (1, 4)


def test_matching_and_open_mi_rows(release):
    matching = ingest_task(release, "matching_mi", ImageHashes())
    assert [r["answer"] for r in matching.support] == ["Yes", "No", "Yes", "No"]
    assert [r["extras"]["group_id"] for r in matching.support] == [0, 0, 1, 1]
    assert [r["extras"]["label"] for r in matching.query] == ["different", "same"]
    open_mi = ingest_task(release, "open_mi", ImageHashes())
    assert len(open_mi.support) == 2 * 25 and len(open_mi.query) == 2
    query = open_mi.query[1]["extras"]
    assert query["query_word"] == "slation" and query["real_label"] == "class2"
    support = {r["id"]: r for r in open_mi.support}
    for entry in query["episode_support"]:
        assert [support[i]["extras"]["shot_index"] for i in entry["image_ids"]] == list(range(5))
        assert {support[i]["answer"] for i in entry["image_ids"]} == {entry["word"]}


def test_both_zip_layouts_give_the_same_rows(tmp_path):
    rows = {}
    for layout in ("a", "b"):
        root = write_release(tmp_path / layout / "VL-ICL", layout)
        result = ingest_task(root, "clevr", ImageHashes())
        rows[layout] = [
            (r["id"], r["answer"], r["extras"], [i["sha256"] for i in r["images"]])
            for r in result.support + result.query
        ]
        files = [i["file"] for r in result.support for i in r["images"]]
        expected = "clevr/support/" if layout == "a" else "clevr/clevr/support/"
        assert all(f.startswith(expected) for f in files)  # found at ROOT/path or ROOT/task/path
    assert rows["a"] == rows["b"]


def test_resolution_falls_back_to_a_unique_basename(tmp_path):
    root = tmp_path / "VL-ICL"
    (root / "clevr" / "somewhere").mkdir(parents=True)
    (root / "clevr" / "somewhere" / "x.png").write_bytes(_png(1))
    resolver = ImageResolver(root, "clevr")
    assert resolver.resolve("clevr/support/x.png", root) == root / "clevr" / "somewhere" / "x.png"
    (root / "clevr" / "other").mkdir()
    (root / "clevr" / "other" / "x.png").write_bytes(_png(2))
    resolver.forget()
    with pytest.raises(SourceError, match="matches 2 files"):
        resolver.resolve("clevr/support/x.png", root)
    with pytest.raises(SourceError, match="leaves the release folder"):
        resolver.resolve("../x.png", root)


def test_rerun_does_not_extract_again(release):
    first = ingest_task(release, "matching_mi", ImageHashes())
    again = ingest_task(release, "matching_mi", ImageHashes())
    assert first.stats["extracted_zips"] == ["support.zip", "query.zip"]
    assert again.stats["extracted_zips"] == [] and again.support == first.support


def test_missing_images_and_hostile_zips_are_clear_errors(tmp_path):
    root = write_release(tmp_path / "VL-ICL", "a")
    with zipfile.ZipFile(root / "clevr" / "query.zip", "w") as archive:
        archive.writestr("query/unrelated.png", _png(99))
    with pytest.raises(SourceError) as info:
        ingest_task(root, "clevr", ImageHashes())
    assert "query.json" in str(info.value) and "CLEVR_val_000000.png" in str(info.value)
    with zipfile.ZipFile(root / "clevr" / "query.zip", "w") as archive:
        archive.writestr("../escape.png", _png(98))
    with pytest.raises(SourceError, match="refusing to extract"):
        ingest_task(root, "clevr", ImageHashes())
    assert not (root / "escape.png").exists()
    whole = (root / "clevr" / "support.zip").read_bytes()
    (root / "clevr" / "query.zip").write_bytes(whole[: len(whole) // 2])
    with pytest.raises(SourceError, match="query.zip is corrupt or truncated") as info:
        ingest_task(root, "clevr", ImageHashes())
    assert "clevr/query.zip of the VL-ICL release" in str(info.value)
    # a zip bomb under an image name the query needs: refused before a byte is written
    write_zip_bomb(root / "clevr" / "query.zip", "query/CLEVR_val_000000.png")
    with pytest.raises(SourceError, match="(?s)would inflate.*archives.max_ratio"):
        ingest_task(root, "clevr", ImageHashes())
    assert not any((root / "clevr").rglob("CLEVR_val_000000.png"))


def _config(shots_for_operators: list[int], samplers: list[str]) -> VliclConfig:
    shots = {t: list(shots_for_operators) for t in TASKS}
    shots.update({"open_mi": [0, 1, 2, 4, 5], "matching_mi": [0, 1, 2], "clevr": [0, 1, 2, 4]})
    return VliclConfig.from_params(
        {"mode": "ingest", "shots": shots, "samplers": samplers}, "sample"
    )


def _episodes(build: Path) -> list[dict]:
    return [json.loads(line) for line in (build / "episodes.jsonl").read_text().splitlines()]


def test_ingest_build_writes_the_build_dir_and_flags_revealing_demos(release, tmp_path):
    summary = build_vlicl(
        _config([0, 1, 2, 4], ["legacy"]), VliclSources(ingest=release), tmp_path / "b"
    )
    info = json.loads((tmp_path / "b" / "build_info.json").read_text(encoding="utf-8"))
    assert info["mode"] == "ingest" and info["roots"]["ingest"] == str(release)
    assert info["font"] is None and info["counts"]["operator_induction"] == {
        "support": 4,
        "query": 2,
    }
    assert summary.counts == info["counts"]
    lines = (tmp_path / "b" / "tasks" / "open_mi" / "query.jsonl").read_text().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [
        "open_mi/query/00000",
        "open_mi/query/00001",
    ]
    # query 0 is "3 x 2", also support item 0: the 4-shot legacy episode must show it
    legacy = [
        e
        for e in _episodes(tmp_path / "b")
        if e["task"] == "operator_induction"
        and e["n_shot"] == 4
        and e["query_id"].endswith("00000")
    ]
    assert len(legacy) == 3 and all(e["extras"]["reveals_query_expression"] for e in legacy)
    assert info["stats"]["operator_induction"]["episodes_revealing_query_expression"]["legacy"] >= 3
    # hashed leaves it out: 3-shot works with the other 3 items, 4-shot cannot
    build_vlicl(_config([0, 3], ["hashed"]), VliclSources(ingest=release), tmp_path / "h")
    hashed = [e for e in _episodes(tmp_path / "h") if e["task"] == "operator_induction"]
    assert hashed and not any(e["extras"]["reveals_query_expression"] for e in hashed)
    with pytest.raises(PlanError, match="need 4 support items"):
        build_vlicl(_config([4], ["hashed"]), VliclSources(ingest=release), tmp_path / "h")
    assert (tmp_path / "h" / "episodes.jsonl").is_file()  # the failed build left the old one


def test_separate_images_root_leaves_the_release_untouched(release, tmp_path):
    before = sorted(p.relative_to(release).as_posix() for p in release.rglob("*"))
    extracted = tmp_path / "extracted"
    config = _config([0, 1], ["hashed"])
    build_vlicl(config, VliclSources(ingest=release, ingest_images=extracted), tmp_path / "out")
    assert sorted(p.relative_to(release).as_posix() for p in release.rglob("*")) == before
    info = json.loads((tmp_path / "out" / "build_info.json").read_text(encoding="utf-8"))
    assert info["roots"]["ingest"] == str(extracted)
    for line in (tmp_path / "out" / "tasks" / "clevr" / "query.jsonl").read_text().splitlines():
        for ref in json.loads(line)["images"]:
            data = (extracted / ref["file"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == ref["sha256"]
