"""Publishing a VL-ICL build: offline loading, typed columns, card, leakage removal, determinism."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import datasets
import pytest
from huggingface_hub import DatasetCard
from vlicl_fixtures import build_sample_vlicl

from benchsmith.builders.vlicl.leakage import check_vlicl_leakage
from benchsmith.builders.vlicl.publication import VliclPublication
from benchsmith.core.errors import BenchsmithError, SourceError
from benchsmith.publish.publisher import publish

TASKS = ["open_mi", "matching_mi", "clevr", "operator_induction", "operator_induction_interleaved",
         "open_t2i_mi", "textocr",
         "clevr_text", "operator_induction_text", "operator_induction_interleaved_text",
         "clevr_text_image_query", "operator_induction_text_image_query",
         "operator_induction_interleaved_text_image_query",
         "cobsat", "fast_count_t2i", "fast_attr_t2i"]  # fmt: skip


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("vlicl_publish")
    build, sources = build_sample_vlicl(root)
    leakage = check_vlicl_leakage(build)
    out = root / "published"
    info = publish(VliclPublication(build), out, "2.0.1", max_shard_mb=0.05)
    return {
        "root": root,
        "build": build,
        "sources": sources,
        "out": out,
        "info": info,
        "leakage": leakage,
    }


def jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_clevr_query_loads_offline_with_decodable_images(published):
    query = datasets.load_dataset(str(published["out"]), "clevr", split="query")
    built = jsonl(published["build"] / "tasks" / "clevr" / "query.jsonl")
    removed = set(published["leakage"]["tasks"]["clevr"]["removed"])
    assert query["id"] == [r["id"] for r in built if r["id"] not in removed]
    attribute = query.features["attribute"]
    assert attribute.names == ["size", "color", "material", "shape"]
    for row, source in zip(query, (r for r in built if r["id"] not in removed), strict=True):
        image = row["images"][0]
        image.load()  # decodes
        assert image.size == (480, 320)
        assert attribute.int2str(row["attribute"]) == source["extras"]["attribute"]
        assert row["count"] == source["extras"]["count"] and row["answer"] == str(row["count"])
        assert row["question"] == f"{source['extras']['attribute']}: {row['value']}"
        prov = row["provenance"]
        assert prov["family"] == "vlicl" and prov["params_hash"] == published["info"]["params_hash"]
        image_file = Path(published["sources"]["clevr"]) / source["images"][0]["file"]
        assert {s["sha256"] for s in prov["sources"]} >= {
            hashlib.sha256(image_file.read_bytes()).hexdigest()
        }


def test_every_task_config_has_support_and_query_and_typed_extras(published):
    out = str(published["out"])
    assert sorted(datasets.get_dataset_config_names(out)) == sorted([*TASKS, "episodes"])
    counts = published["info"]["counts"]
    loaded = {task: datasets.load_dataset(out, task) for task in TASKS}  # both splits at once
    for task in TASKS:
        for split in ("support", "query"):
            ds = loaded[task][split]
            assert ds.num_rows == counts[task][split]["published"] > 0
            assert isinstance(ds.features["images"], datasets.List)
            assert isinstance(ds.features["images"].feature, datasets.Image)
        assert (
            counts[task]["query"]["published"]
            == counts[task]["query"]["built"] - counts[task]["query"]["removed"]
        )
    ops = loaded["operator_induction_interleaved"]["query"]
    first = ops[0]
    assert len(first["images"]) == 2 and ops.features["operator"].names == ["+", "-", "x"]
    name = ops.features["operator"].int2str(first["operator"])
    assert first["answer"] == str(
        first["answers_by_op"][{"+": "plus", "-": "minus", "x": "times"}[name]]
    )
    support = loaded["operator_induction"]["support"]
    assert set(support["operator"]) == {None}
    open_query = loaded["open_mi"]["query"][0]
    support_ids = set(loaded["open_mi"]["support"]["id"])
    assert (
        len(open_query["episode_support"]) == 5
        and open_query["query_word"] in open_query["classes"]
    )
    assert all(set(s["image_ids"]) <= support_ids for s in open_query["episode_support"])
    matching = loaded["matching_mi"]["query"]
    labels = [matching.features["label"].int2str(v) for v in matching["label"]]
    assert Counter(zip(labels, matching["answer"], strict=True)) == Counter(
        {("same", "Yes"): len(labels) // 2, ("different", "No"): len(labels) // 2}
    )


def test_episodes_config_has_one_split_per_sampler_without_removed_queries(published):
    out = str(published["out"])
    removed = {i for t in published["leakage"]["tasks"].values() for i in t["removed"]}
    built = jsonl(published["build"] / "episodes.jsonl")
    for sampler in ("hashed", "legacy"):
        episodes = datasets.load_dataset(out, "episodes", split=sampler)
        expected = [e for e in built if e["sampler"] == sampler and e["query_id"] not in removed]
        assert episodes.num_rows == len(expected) > 0
        assert set(episodes["sampler"]) == {sampler}
        assert not removed & set(episodes["query_id"])
        row = episodes[len(expected) // 2]
        assert row["demo_ids"] == expected[len(expected) // 2]["demo_ids"]
    open_mi = datasets.load_dataset(out, "episodes", split="hashed").filter(
        lambda e: e["task"] == "open_mi" and e["n_shot"] == 2
    )
    for row in open_mi:
        assert len(row["classes"]) == 2 and row["distractor"] in row["classes"]
        assert row["demo_answers"] == row["classes"] * 2


def test_card_has_configs_yaml_leakage_section_and_licences(published):
    card = DatasetCard.load(published["out"] / "README.md")
    data = card.data.to_dict()
    assert data["version"] == "2.0.1"
    configs = {c["config_name"]: c for c in data["configs"]}
    assert set(configs) == {*TASKS, "episodes"} and len(data["dataset_info"]) == len(TASKS) + 1
    assert {s["split"] for s in configs["clevr"]["data_files"]} == {"support", "query"}
    assert {s["split"] for s in configs["episodes"]["data_files"]} == {"hashed", "legacy"}
    text = card.text
    assert "## Leakage report" in text and "| `matching_mi` |" in text
    assert "ImageNet terms" in text and "CC BY 4.0" in text
    for choice in published["info"]["choices"]:
        assert choice in text
    # the CLEVR answer histogram matches the published answers
    for split in ("support", "query"):
        answers = Counter(
            datasets.load_dataset(str(published["out"]), "clevr", split=split)["answer"]
        )
        assert published["info"]["answer_histograms"]["clevr"][split] == dict(answers)
    for answer, n in Counter(
        datasets.load_dataset(str(published["out"]), "clevr", split="query")["answer"]
    ).items():
        assert f"| {answer} | " in text and f" | {n} |" in text


def test_small_shards_roll_over_and_republishing_is_byte_identical(published, tmp_path):
    out, again = published["out"], tmp_path / "again"
    assert len(published["info"]["configs"]["open_mi"]["support"]["files"]) > 1  # 0.05 MB shards
    publish(VliclPublication(published["build"]), again, "2.0.1", max_shard_mb=0.05)

    def tree(root: Path) -> dict[str, str]:
        return {
            p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((root / "data").rglob("*.parquet"))
        }

    assert tree(out) == tree(again) and len(tree(out)) > 12
    assert (out / "README.md").read_bytes() == (again / "README.md").read_bytes()


def test_planted_support_query_duplicate_is_removed_and_reported(published, tmp_path):
    build = tmp_path / "build"
    shutil.copytree(published["build"], build)
    shutil.copy(published["build"].parent / "leakage.json", tmp_path / "leakage.json")
    queries = jsonl(build / "tasks/operator_induction/query.jsonl")
    support = jsonl(build / "tasks/operator_induction/support.jsonl")
    victim = queries[4]
    victim["images"] = support[7]["images"]  # the query now shows a support row's exact image
    (build / "tasks/operator_induction/query.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in queries)
    )
    with pytest.raises(BenchsmithError, match="different build"):
        publish(
            VliclPublication(build), tmp_path / "stale", "2.0.1"
        )  # leakage.json predates the change
    check_vlicl_leakage(build)
    out = tmp_path / "out"
    info = publish(VliclPublication(build), out, "2.0.1")
    query = datasets.load_dataset(str(out), "operator_induction", split="query")
    assert victim["id"] not in query["id"] and query.num_rows == len(queries) - 1
    assert info["counts"]["operator_induction"]["query"]["removed"] == 1
    episodes = datasets.load_dataset(str(out), "episodes", split="legacy")
    assert victim["id"] not in set(episodes["query_id"])
    flagged = datasets.load_dataset(str(out), "operator_induction", split="support").filter(
        lambda r: r["id"] == support[7]["id"]
    )[0]
    assert [d["reason"] for d in flagged["provenance"]["decisions"]] == [
        "DUPLICATES_A_REMOVED_QUERY_IMAGE"
    ]
    card = (out / "README.md").read_text()
    assert f"`{victim['id']}` (EXACT_DUPLICATE_IMAGE_IN_SUPPORT)" in card


def test_a_source_changed_after_the_build_is_an_error_naming_it(published, tmp_path):
    sources = tmp_path / "sources"
    shutil.copytree(published["sources"]["clevr"], sources / "CLEVR_v1.0")
    row = jsonl(published["build"] / "tasks/clevr/support.jsonl")[0]
    victim = sources / "CLEVR_v1.0" / row["images"][0]["file"]
    victim.write_bytes(victim.read_bytes() + b"\0")
    out = tmp_path / "out"
    with pytest.raises(SourceError) as info:
        publication = VliclPublication(
            published["build"], roots_override={"clevr": sources / "CLEVR_v1.0"}
        )
        publish(publication, out, "1.0.0")
    assert str(victim) in str(info.value) and "changed since the build" in str(info.value)
    assert not out.exists()  # nothing half-written


def test_publish_without_a_leakage_report_says_what_to_run(tmp_path):
    build, _ = build_sample_vlicl(tmp_path)
    with pytest.raises(BenchsmithError, match="vlicl leakage"):
        publish(VliclPublication(build), tmp_path / "out", "1.0.0")
