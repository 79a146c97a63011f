"""Ingest mode on a miniature official release in its real layout: every row read into the
clean schema, the release's known faults flagged and its shortcuts reported, not fixed."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
from card_markdown import card_tables

from benchsmith.builders.mmiu.ingest import parse_options
from benchsmith.builders.mmiu.ingest_sample import POSE_ROWS, write_sample_release
from benchsmith.cli import main
from benchsmith.core.hashing import sha256_bytes


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return write_sample_release(tmp_path_factory.mktemp("release") / "MMIU-Benchmark")


@pytest.fixture(scope="module")
def ingested(release, tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("ingest")
    plan, out = root / "plan", root / "mmiu-release"
    assert main(["build", "mmiu", "plan", "--mode", "ingest", "--ingest-dir", str(release),
                 "--out", str(plan)]) == 0  # fmt: skip
    assert main(["build", "mmiu", "check", str(plan)]) == 0  # findings, not a gate
    assert main(["publish", "mmiu", str(plan), "--out", str(out), "--version", "2024.6.0"]) == 0
    return {"plan": plan, "out": out, "shortcuts": root / "shortcuts.json"}


def test_options_parse_as_the_release_writes_them():
    assert parse_options("A: x\nB: y\n") == ["x", "y"]
    assert parse_options("A:x\n B :  y  \nC: two\nlines") == ["x", "y", "two\nlines"]
    assert parse_options("A. Yes\nB. No") == ["Yes", "No"]
    assert parse_options("B: x\nC: y") is None and parse_options("A: only") is None
    nine = parse_options("\n".join(f"{chr(65 + k)}: [{k}]" for k in range(9)))
    assert nine is not None and len(nine) == 9


def test_every_row_is_read_and_the_faults_are_flagged(release, ingested):
    released = pq.read_table(release / "all.parquet").to_pylist()
    info = json.loads((ingested["out"] / "build_info.json").read_text())
    assert info["mode"] == "ingest" and sum(info["counts"].values()) == len(released) - 1
    assert info["skips"] == {"spot_the_similarity": {"answer is not one of the option letters": 1}}
    assert info["ingest"]["homography_estimation"]["DUPLICATE_OPTIONS"] == 1
    assert info["ingest"]["spot_the_diff"]["LABEL_INVERSION_SUSPECTED"] == 2
    rows = datasets.load_dataset(str(ingested["out"]), "spot_the_diff", split="test")
    for row in rows:
        reasons = [d["reason"] for d in row["provenance"]["decisions"]]
        assert reasons == ["LABEL_INVERSION_SUSPECTED"] and row["prompt_order"] == "question_first"
    nine = datasets.load_dataset(str(ingested["out"]), "image_text_retrieval_with_spatial_context",
                                 split="test")[0]  # fmt: skip
    assert nine["num_options"] == 9 and nine["answer"] == "I" and nine["answer_index"] == 8
    forensic = datasets.load_dataset(str(ingested["out"]), "forensic_detection_blink", split="test")
    refs = forensic[0]["image_refs"]
    assert refs[0]["file"].endswith(".JPEG")  # the release's mixed-case extensions are read
    data = forensic.cast_column("images", datasets.List(datasets.Image(decode=False)))[0]
    assert [sha256_bytes(i["bytes"]) for i in data["images"]] == [r["sha256"] for r in refs]


def test_the_releases_shortcuts_are_reported(ingested):
    report = json.loads(ingested["shortcuts"].read_text())
    assert report["failed"] == []  # an ingest is described, never gated
    assert "threed_pose_estimation" in report["failing_in_release"]
    pose = report["tasks"]["threed_pose_estimation"]
    assert pose["items"] == POSE_ROWS and "closest_to_identity" in pose["failing_rules"]
    # numbers in exponent notation (3.1e-05) are read: the rule answers every row, never abstains
    identity = next(r for r in pose["rules"] if r["name"] == "closest_to_identity")
    assert identity["coverage"] == 1.0 and identity["accuracy"] == 1.0
    recon = report["tasks"]["threed_scene_reconstruction"]
    # options worded "The 5th image" name their images; the only .jpg is the gold every time
    images = recon["option_images"]
    assert images["items"] == images["mixed_kind"] == recon["items"] > 0
    assert images["odd_file_type"] == images["odd_file_type_is_gold"] == recon["items"]
    odd = next(r for r in recon["rules"] if r["name"] == "odd_file_type")
    assert odd["accuracy"] == 1.0 and "odd_file_type" in recon["failing_rules"]
    card = (ingested["out"] / "README.md").read_text()
    assert "official release (ingested" in card and "mmiu-release-v2024.6.0" in card
    assert "| `threed_pose_estimation` | 12 |" in card and "blind rule closest_to_identity" in card
    assert "blind rule odd_file_type" in card
    tables = card_tables(card)  # every table renders as a table
    cells = {cell.strip("`") for table in tables for row in table for cell in row}
    assert set(json.loads((ingested["out"] / "build_info.json").read_text())["configs"]) <= cells


def test_the_legacy_judge_gets_the_releases_options_verbatim(release, ingested, tmp_path):
    """The official matching prompt quotes the release's ``options`` string as it is (its
    spacing and final newline), so the legacy judge sees the prompt ``evaluate.py`` sent."""
    from chat_server import ChatServer, Reply

    from benchsmith.scoring.mmiu import score_mmiu
    from benchsmith.scoring.mmiu_parse import legacy_judge_prompt

    rows = pq.read_table(release / "all.parquet").to_pylist()
    config = "spot_the_diff"  # the release's options end with a newline here
    published = pq.read_table(next((ingested["out"] / "data" / config).glob("*.parquet")),
                              columns=["id", "question", "task_extras"]).to_pylist()  # fmt: skip
    path = tmp_path / "p.jsonl"
    path.write_text("".join(json.dumps({"id": r["id"], "response": "the first one"}) + "\n"
                            for r in published))  # fmt: skip
    with ChatServer() as server:
        server.script(*[Reply("A")] * len(published))
        score_mmiu(ingested["out"], config, path, legacy=True, judge_base_url=server.base_url,
                   judge_cache=str(tmp_path / "cache"))  # fmt: skip
        sent = [r.text for r in server.requests]
    release_rows = {str(json.loads(r["task_extras"])["release_row"]): r for r in published}
    expected = [legacy_judge_prompt(rows[int(n)]["question"], rows[int(n)]["options"],
                                    "the first one") for n in release_rows]  # fmt: skip
    assert set(sent) == set(expected)  # rows that ask the same share one cached request
    assert all(rows[int(n)]["options"].endswith("\n") for n in release_rows)
    rebuilt = [legacy_judge_prompt(rows[int(n)]["question"], rows[int(n)]["options"][:-1],
                                   "the first one") for n in release_rows]  # fmt: skip
    assert not set(rebuilt) & set(sent)  # the options rebuilt from the list lose that newline


def test_scannet_images_of_the_release_are_references_and_rehydrate(release, ingested, tmp_path):
    pose = datasets.load_dataset(str(ingested["out"]), "threed_pose_estimation", split="test")
    assert pose[0]["images"] == [None] * 4  # ScanNet frames are not redistributed
    assert main(["build", "mmiu", "rehydrate", str(ingested["out"]), "--out", str(tmp_path / "x"),
                 "--scannet", str(tmp_path)]) == 2  # fmt: skip
    assert main(["build", "mmiu", "rehydrate", str(ingested["out"]), "--release", str(release),
                 "--out", str(tmp_path / "local")]) == 0  # fmt: skip
    local = datasets.load_dataset(str(tmp_path / "local"), "threed_pose_estimation", split="test")
    assert all(image is not None for image in local[0]["images"])
    assert main(["audit", str(tmp_path / "local")]) == 0


def test_the_ingested_dataset_audits_and_a_changed_release_file_is_named(
    release, ingested, tmp_path, capsys
):
    assert main(["audit", str(ingested["out"])]) == 0
    capsys.readouterr()
    changed = tmp_path / "release"
    import shutil

    shutil.copytree(release, changed)
    image = next((changed / "2D-spatial" / "homography_estimation").iterdir())
    image.write_bytes(image.read_bytes() + b"\x00")
    assert main(["audit", str(ingested["out"]), "--root", f"release={changed}"]) == 1
    assert image.name in capsys.readouterr().out


def test_a_duplicated_release_row_is_a_counted_skip(release, tmp_path):
    """The same row twice in all.parquet would be one item published twice."""
    import shutil

    import pyarrow as pa

    copy = Path(shutil.copytree(release, tmp_path / "MMIU-Benchmark"))
    table = pq.read_table(copy / "all.parquet")
    doubled = pa.concat_tables([table, table.slice(0, 1)])
    pq.write_table(doubled, copy / "all.parquet")
    plan = tmp_path / "plan"
    assert main(["build", "mmiu", "plan", "--mode", "ingest", "--ingest-dir", str(copy),
                 "--out", str(plan)]) == 0  # fmt: skip
    info = json.loads((plan / "build_info.json").read_text())
    task = table.column("task")[0].as_py()
    assert info["skips"][task]["an exact duplicate of an earlier release row"] == 1
    original = tmp_path / "original"
    assert main(["build", "mmiu", "plan", "--mode", "ingest", "--ingest-dir", str(release),
                 "--out", str(original)]) == 0  # fmt: skip
    assert info["counts"] == json.loads((original / "build_info.json").read_text())["counts"]
