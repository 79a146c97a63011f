"""The questions and select steps end to end on the sample sources, and their bad input."""

from __future__ import annotations

import json
import shutil

import pytest

from benchsmith.builders.multi.config import MultiConfig
from benchsmith.builders.multi.plan import MultiSources, build_questions, select_questions
from benchsmith.core.errors import BenchsmithError


def rows(folder, name="questions.jsonl"):
    return [json.loads(line) for line in (folder / name).read_text("utf-8").splitlines()]


def test_release_ids_kept_scans_collapsed_elite_and_extend(multi_build):
    plan = multi_build["plan"]
    kept = {r["question_id"]: r for r in rows(plan)}
    release_ids = ["czsx_0_0", "shjk_0_0", "gzsw_0_0", "gzwl_0_0", "gzwl_0_1", "shxc_0_0",
                   "czdl_0_0", "czyw_0_0", "dxgs_0_0"]  # fmt: skip
    assert all(q in kept for q in release_ids)
    # the four scans of each page question are one question after near-duplicate removal,
    # read from the clean page; the scans of the release's dxgs_0_0 (other options) go to it
    for question in ("gzsx_scan-page002-", "czyw_scan-page001-"):
        [one] = [q for q in kept if q.startswith(question)]
        assert one.startswith(f"{question}clean-"), one
    assert not any(q.startswith("czsx_scan-page001-") for q in kept)
    removed = {r["question_id"]: r["decisions"][-1] for r in rows(plan, "removed.jsonl")}
    # the driving question was scanned from an exam the release also holds: the release's kept
    assert not any(q.startswith("shjk_scan-page002-") for q in kept)
    assert json.loads(removed["shjk_scan-page002-clean-q4_0"]["evidence"])["kept"] == "shjk_0_0"
    assert removed["czsx_scan-page001-clean-q1_0"]["reason"] == "NEAR_DUPLICATE"
    assert {d["reason"] for d in removed.values()} <= {"NEAR_DUPLICATE", "NOT_SELECTED"}
    elite = sorted(q for q, r in kept.items() if r["in_elite"])
    assert elite == sorted(["czsx_0_0", "gzsw_0_0", "shxc_0_0", "gzwl_0_0"])  # the hard list
    extend = {r["knowledge_key"]: r for r in rows(plan, "extend.jsonl")}
    assert extend["细胞结构"]["question_ids"] == ["gzsw_0_0"]
    assert extend["细胞结构"]["image_paths"] == ["images/kn/0_1.png"]
    info = json.loads((plan / "build_info.json").read_text("utf-8"))
    assert info["counts"]["selected"] == len(kept) and info["near_duplicates"]["removed"] >= 9


def test_steps_are_deterministic(multi_build, tmp_path):
    config = MultiConfig()
    sources = MultiSources(multi_build["release"], multi_build["converted"])
    build_questions(config, sources, tmp_path / "q")
    select_questions(tmp_path / "q", config, tmp_path / "p")
    for name in ("questions.jsonl", "removed.jsonl", "extend.jsonl"):
        assert (tmp_path / "p" / name).read_bytes() == (multi_build["plan"] / name).read_bytes()


def copy_release(multi_build, tmp_path):
    release = tmp_path / "release"
    shutil.copytree(multi_build["release"], release)
    return release, release / "problem_v1.3.1_20241210.json"


def test_malformed_problem_file_is_named(multi_build, tmp_path):
    release, problems = copy_release(multi_build, tmp_path)
    problems.write_text(problems.read_text("utf-8")[:-20], encoding="utf-8")
    with pytest.raises(BenchsmithError, match="problem_v1.3.1_20241210.json"):
        build_questions(MultiConfig(), MultiSources(release, None), tmp_path / "q")


def test_image_tag_past_img_paths_is_named(multi_build, tmp_path):
    release, problems = copy_release(multi_build, tmp_path)
    data = json.loads(problems.read_text("utf-8"))
    data["czsx_0"]["problem_content_list"][0] += " [IMAGE_3]"
    problems.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(BenchsmithError, match=r"\[IMAGE_3\] points past its 0 img_paths"):
        build_questions(MultiConfig(), MultiSources(release, None), tmp_path / "q")


def test_missing_and_undecodable_images(multi_build, tmp_path):
    release, _ = copy_release(multi_build, tmp_path)
    (release / "images" / "gzsw" / "0_1.png").write_bytes(b"\x89PNG\r\n\x1a\nbroken")
    out = tmp_path / "q"
    info = build_questions(MultiConfig(), MultiSources(release, None), out)
    assert info["counts"]["skipped"] == 1
    (skipped,) = rows(out, "skipped.jsonl")
    assert skipped["question_id"] == "gzsw_0_0"
    assert skipped["decisions"][-1]["reason"] == "IMAGE_NOT_DECODED"
    (release / "images" / "gzsw" / "0_1.png").unlink()
    with pytest.raises(BenchsmithError, match="image 'images/gzsw/0_1.png' is missing|0_1.png"):
        build_questions(MultiConfig(), MultiSources(release, None), tmp_path / "q2")
    assert (out / "questions.jsonl").is_file()  # what was built is still there
