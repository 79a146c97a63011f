"""The whole VL-ICL build directory from the sample sources: contract, determinism, errors."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
from pathlib import Path

import pytest
from vlicl_fixtures import shuffle_csv_rows, write_vlicl_sample_sources

from benchsmith.builders.vlicl.config import REBUILT_TASKS as TASKS
from benchsmith.builders.vlicl.config import VliclConfig
from benchsmith.builders.vlicl.plan import VliclSources, build_vlicl
from benchsmith.core.errors import BenchsmithError

BUILD_INFO_KEYS = {
    "family",
    "mode",
    "builder_version",
    "params",
    "params_hash",
    "seed",
    "roots",
    "font",
    "sources_digest",
    "counts",
    "choices",
}


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, Path]:
    return write_vlicl_sample_sources(tmp_path_factory.mktemp("vlicl") / "sources")


@pytest.fixture(scope="module")
def build(sources, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("vlicl_build") / "build"
    build_vlicl(VliclConfig.from_params({}, "sample"), VliclSources(**sources), out)
    return out


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_layout_and_build_info_follow_the_contract(build, sources):
    info = json.loads((build / "build_info.json").read_text(encoding="utf-8"))
    assert set(info) >= BUILD_INFO_KEYS
    assert info["family"] == "vlicl" and info["mode"] == "rebuild" and info["seed"] == 0
    assert info["roots"] == {
        "miniimagenet": str(sources["miniimagenet"]),
        "clevr": str(sources["clevr"]),
        "textocr": str(sources["textocr"]),
        "rendered": "rendered",
        "ingest": str(sources["ingest"]),
    }
    assert set(info["font"]) == {"name", "sha256", "source"}
    assert len(info["choices"]) >= 8 and all(isinstance(c, str) and c for c in info["choices"])
    for task in TASKS:
        for split in ("support", "query"):
            rows = _jsonl(build / "tasks" / task / f"{split}.jsonl")
            assert len(rows) == info["counts"][task][split] > 0
            ids = [r["id"] for r in rows]
            assert ids == sorted(ids) and len(set(ids)) == len(ids)
            assert all(r["id"].startswith(f"{task}/{split}/") and r["task"] == task for r in rows)
            assert all(isinstance(r["answer"], str) and r["sources"] for r in rows)
    assert info["counts"]["operator_induction"] == {"support": 80, "query": 60}


def test_every_image_ref_matches_its_file(build, sources):
    roots = {
        "miniimagenet": sources["miniimagenet"],
        "clevr": sources["clevr"],
        "textocr": sources["textocr"],
        "ingest": sources["ingest"],
        "rendered": build / "rendered",
    }
    for path in (build / "tasks").rglob("*.jsonl"):
        for row in _jsonl(path):
            for ref in row["images"]:
                data = (roots[ref["root"]] / ref["file"]).read_bytes()
                assert hashlib.sha256(data).hexdigest() == ref["sha256"]


def test_episodes_cover_every_query_sampler_seed_and_shot(build):
    episodes = _jsonl(build / "episodes.jsonl")
    keys = [(e["task"], e["sampler"], e["seed"], e["n_shot"], e["query_id"]) for e in episodes]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    params = json.loads((build / "build_info.json").read_text())["params"]
    for task in TASKS:
        support = {r["id"] for r in _jsonl(build / "tasks" / task / "support.jsonl")}
        queries = [r["id"] for r in _jsonl(build / "tasks" / task / "query.jsonl")]
        mine = [e for e in episodes if e["task"] == task]
        assert len(mine) == 2 * 3 * len(params["shots"][task]) * len(queries)
        assert all(set(e["demo_ids"]) <= support for e in mine)
        assert all(len(e["demo_ids"]) == len(e["demo_answers"]) for e in mine)


def test_matching_queries_share_no_image_with_open_mi_queries(build):
    open_mi = {
        i["sha256"] for r in _jsonl(build / "tasks/open_mi/query.jsonl") for i in r["images"]
    }
    matching = {
        i["sha256"] for r in _jsonl(build / "tasks/matching_mi/query.jsonl") for i in r["images"]
    }
    assert open_mi and matching and not open_mi & matching


def test_same_seed_gives_a_byte_identical_build(build, sources, tmp_path):
    again = tmp_path / "again"
    build_vlicl(VliclConfig.from_params({}, "sample"), VliclSources(**sources), again)
    assert _files(again) == _files(build)
    other = tmp_path / "other"
    build_vlicl(VliclConfig.from_params({"seed": 1}, "sample"), VliclSources(**sources), other)
    assert _files(other)["tasks/open_mi/query.jsonl"] != _files(build)["tasks/open_mi/query.jsonl"]


def test_shuffled_source_order_gives_the_same_rows(build, sources, tmp_path):
    mini = shuffle_csv_rows(
        sources["miniimagenet"], tmp_path / "mini", ("train", "val", "test"), seed=11
    )
    clevr = tmp_path / "clevr" / "CLEVR_v1.0"
    shutil.copytree(sources["clevr"], clevr)
    for split in ("train", "val"):
        path = clevr / "scenes" / f"CLEVR_{split}_scenes.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        random.Random(5).shuffle(data["scenes"])
        path.write_text(json.dumps(data), encoding="utf-8")
    textocr = tmp_path / "textocr"
    shutil.copytree(sources["textocr"], textocr)
    for split in ("train", "val"):  # images, words and index listed in another order
        path = textocr / f"TextOCR_0.1_{split}.json"
        data = json.loads(path.read_text(encoding="utf-8"))
        for key in ("imgs", "anns", "imgToAnns"):
            items = list(data[key].items())
            random.Random(5).shuffle(items)
            data[key] = dict(items)
        path.write_text(json.dumps(data), encoding="utf-8")
    out = tmp_path / "shuffled"
    build_vlicl(
        VliclConfig.from_params({}, "sample"),
        VliclSources(miniimagenet=mini, clevr=clevr, textocr=textocr, ingest=sources["ingest"]),
        out,
    )
    before, after = _files(build), _files(out)
    assert set(before) == set(after)
    same_bytes = [k for k in before if k.startswith("rendered/") or k == "episodes.jsonl"]
    same_bytes += [
        f"tasks/{t}/{s}.jsonl"
        for t in TASKS
        if not t.startswith("clevr") and t not in ("open_t2i_mi", "textocr")
        for s in ("support", "query")
    ]
    assert all(before[k] == after[k] for k in same_bytes)
    # clevr rows (and their text variants') cite the scenes file, open_t2i_mi queries the
    # test.csv, textocr rows the annotations file, whose bytes (hence sha256) changed with
    # their order
    for task in (t for t in TASKS if t.startswith("clevr") or t in ("open_t2i_mi", "textocr")):
        for split in ("support", "query"):
            old_rows = _without_scene_sha(_jsonl(build / "tasks" / task / f"{split}.jsonl"))
            new_rows = _without_scene_sha(_jsonl(out / "tasks" / task / f"{split}.jsonl"))
            assert old_rows == new_rows


def _without_scene_sha(rows: list[dict]) -> list[dict]:
    for row in rows:
        for record in row["sources"]:
            if (
                record["file"].startswith(("scenes/", "TextOCR_0.1_"))
                or record["file"] == "test.csv"
            ):
                record["sha256"] = None
    return rows


def test_failed_build_keeps_the_previous_output(build, sources, tmp_path):
    out = tmp_path / "keep"
    shutil.copytree(build, out)
    before = _files(out)
    with pytest.raises(BenchsmithError, match="CLEVR_v1.0"):
        build_vlicl(
            VliclConfig.from_params({}, "sample"),
            VliclSources(miniimagenet=sources["miniimagenet"]),
            out,
        )
    assert _files(out) == before
    assert not list(tmp_path.glob(".keep.tmp-*"))


def test_config_from_params_and_bad_params():
    config = VliclConfig.from_params(
        {
            "sizes": {"full": {"open_mi": {"episodes": 50}}},
            "tasks": ["clevr"],
            "episode_seeds": [4],
        },
        "full",
    )
    assert config.sizes.open_mi_episodes == 50 and config.sizes.clevr_support == 800
    assert config.tasks == ("clevr",) and config.episode_seeds == (4,)
    assert VliclConfig.from_params({}, "sample").sizes.open_mi_episodes == 8
    with pytest.raises(BenchsmithError, match="even"):
        VliclConfig.from_params({"sizes": {"sample": {"matching_mi": {"support": 15}}}}, "sample")
    with pytest.raises(BenchsmithError, match="stores 5 images"):
        VliclConfig.from_params({"shots": {"open_mi": [0, 8]}}, "sample")
    with pytest.raises(BenchsmithError, match="unknown mode"):
        VliclConfig.from_params({"mode": "remix"}, "sample")


def test_sizes_are_declared_once_per_profile_and_task():
    """``vlicl.sizes.<profile>.<task>.<key>`` is the Sizes declaration: the params schema is
    read from it, each profile's defaults come from it, and a bad value names its key."""
    from benchsmith.builders.vlicl.config import Sizes
    from benchsmith.builders.vlicl.params import params_fields
    from benchsmith.core.settings import declared, key_of

    schema = params_fields()["sizes"]
    for name in declared(Sizes):
        profile, group, key = key_of(Sizes, name, "full").split(".")
        assert key in schema.fields["full"].fields[group].fields, name
        assert key in schema.fields["sample"].fields[group].fields, name
    sample, full = Sizes.of_profile("sample"), Sizes.of_profile("full")
    assert (sample.clevr_support, full.clevr_support) == (24, 800)
    assert sample.operator_support == full.operator_support == 80  # rendered: full in both
    given = Sizes.of_profile("full", {"full": {"textocr": {"query": 7}}, "sample": {}})
    assert (given.textocr_query, given.textocr_support) == (7, 800)
    with pytest.raises(BenchsmithError, match=r"vlicl.sizes.<profile>.clevr.support must be"):
        VliclConfig.from_params({"sizes": {"sample": {"clevr": {"support": 0}}}}, "sample")
