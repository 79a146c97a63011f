"""The shortcut gate: the sample build passes, the original's 3DPE shortcut fails, and a
text-only model that can answer blind fails its config too."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from chat_server import ChatServer, Reply

from benchsmith.builders.mmiu.config import TASKS, ShortcutGate
from benchsmith.builders.mmiu.prompts import choices_block
from benchsmith.builders.mmiu.shortcuts import check_plan, check_task
from benchsmith.cli import main
from benchsmith.core.intervals import wilson_lower, z_value
from benchsmith.core.llm import LLMClient, LLMConfig
from benchsmith.options.distractors import chi_square_p, format_matrix


def test_wilson_bound_judges_evidence_not_noise():
    z = 2.3263
    assert wilson_lower(1.0, 12, z) == pytest.approx(12 / (12 + z * z), rel=1e-6)
    assert wilson_lower(5 / 12, 12, z) < 0.25  # 5 of 12 on a 4-way task: noise
    assert wilson_lower(0.30, 10_000, z) > 0.27  # a real 5-point lift at scale
    assert wilson_lower(0.0, 0, z) == 0.0


def test_the_statistics_are_scipy_stats_own_without_importing_it():
    """z and the answer-letter p-value come from scipy.special (a fast import); they are the
    numbers scipy.stats gives, to the last bit."""
    from scipy.stats import chisquare, norm

    for confidence in (0.9, 0.95, 0.99, 0.995, 0.999):
        assert z_value(confidence) == float(norm.ppf(confidence))
    rng = np.random.default_rng(0)
    for _ in range(500):
        counts = [int(c) for c in rng.integers(0, 40, int(rng.integers(2, 7)))]
        expected = float(chisquare(counts).pvalue) if sum(counts) else 1.0
        assert chi_square_p(counts) == expected, counts


def test_the_sample_build_passes_every_config(mmiu_plan, tmp_path):
    report = check_plan(mmiu_plan, ShortcutGate(), tmp_path / "shortcuts.json")
    assert report["failed"] == [] and set(report["tasks"]) == set(TASKS)
    for task in report["tasks"].values():
        assert task["verdict"] == "pass"
        assert {r["name"] for r in task["rules"]} >= {"answer_prior", "closest_to_identity",
                                                      "most_decimals", "medoid_option"}  # fmt: skip
    assert json.loads((tmp_path / "shortcuts.json").read_text())["plan_fingerprint"]


def original_style(row: dict) -> dict:
    """The release's 3DPE: distractors are absolute camera poses, so the gold is the only
    near-identity matrix."""
    poses = [np.asarray(p) for p in row["camera_poses"]]
    absolute = [format_matrix(poses[k % 2][:3] + 0.1 * k, 3) for k in range(3)]
    options = list(absolute)
    options.insert(row["answer_index"], row["options"][row["answer_index"]])
    head = row["context"].rsplit("\nSelect from", 1)[0]
    return {**row, "options": options, "context": head + "\n" + choices_block(options)}


def test_the_originals_pose_shortcut_fails_the_gate_unless_allowed(mmiu_plan, tmp_path, capsys):
    plan = Path(shutil.copytree(mmiu_plan, tmp_path / "plan"))
    items = plan / "items" / "3d_pose_estimation.jsonl"
    rows = [original_style(json.loads(line)) for line in items.read_text().splitlines()]
    items.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = check_task(rows, ShortcutGate())
    assert result["verdict"] == "fail" and "closest_to_identity" in result["failing_rules"]
    assert main(["build", "mmiu", "check", str(plan), "--out", str(tmp_path / "s.json")]) == 1
    assert "FAILED ['3d_pose_estimation']" in capsys.readouterr().err
    assert main(["publish", "mmiu", str(plan), "--shortcuts", str(tmp_path / "s.json"),
                 "--out", str(tmp_path / "out")]) == 2  # fmt: skip
    assert "failed the shortcut check" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    allowed = check_task(rows, ShortcutGate(allow=("3d_pose_estimation",)))
    assert allowed["verdict"] == "allowed"


def test_a_text_only_model_is_asked_without_images(mmiu_plan, tmp_path):
    rows = [json.loads(line) for line in
            (mmiu_plan / "items" / "jigsaw_puzzle_solving.jsonl").read_text().splitlines()]  # fmt: skip
    answers = {r["context"].rsplit("Select from", 1)[1]: r["answer"] for r in rows}

    def knows(body: dict) -> Reply:  # a model that somehow answers without looking
        content = body["messages"][0]["content"]
        text = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content)
        return Reply(next(a for key, a in answers.items() if key in text))

    with ChatServer(reply=knows) as server:
        client = LLMClient(LLMConfig(model="blind-m", base_url=server.base_url,
                                     cache_dir=tmp_path / "cache"))  # fmt: skip
        result = check_task(rows, ShortcutGate(text_only_model="blind-m"), client)
        assert not any(r.has_image for r in server.requests) and len(server.requests) == 12
    rule = next(r for r in result["rules"] if r["name"] == "text_only_llm[blind-m]")
    assert rule["accuracy"] == 1.0 and rule["fails"] and result["verdict"] == "fail"
    with ChatServer(reply=lambda body: Reply("Answer: A")) as server:
        client = LLMClient(LLMConfig(model="guess", base_url=server.base_url,
                                     cache_dir=tmp_path / "cache"))  # fmt: skip
        result = check_task(rows, ShortcutGate(text_only_model="guess"), client)
    assert result["verdict"] == "pass" and result["text_only"]["unparsed"] == 0


def test_the_check_step_asks_the_text_only_model_its_flags_and_params_name(mmiu_plan, tmp_path,
                                                                          capsys):  # fmt: skip
    """``build mmiu check`` reads the model from ``mmiu.shortcuts`` and the server and cache
    from its flags (``--llm-cache``, the older name, too); the report records the model, never
    the server or the cache."""
    plan = Path(shutil.copytree(mmiu_plan, tmp_path / "plan"))
    params = tmp_path / "params.yaml"
    params.write_text("mmiu:\n  shortcuts:\n    text_only_model: guess\n"
                      "    allow: [jigsaw_puzzle_solving]\n")  # fmt: skip
    with ChatServer(reply=lambda body: Reply("Answer: A")) as server:
        code = main(["build", "mmiu", "check", str(plan), "--params", str(params),
                     "--base-url", server.base_url, "--llm-cache", str(tmp_path / "replies")])  # fmt: skip
        asked = len(server.requests)
    capsys.readouterr()
    items = sum(len(p.read_text().splitlines()) for p in (plan / "items").glob("*.jsonl"))
    assert code == 0 and 0 < asked <= items  # each distinct prompt once (the client caches)
    assert any((tmp_path / "replies").rglob("*.json"))
    report = json.loads((tmp_path / "shortcuts.json").read_text())
    assert report["gate"]["text_only_model"] == "guess"
    assert report["gate"]["allow"] == ["jigsaw_puzzle_solving"]
    for task, result in report["tasks"].items():
        assert "text_only_llm[guess]" in {r["name"] for r in result["rules"]}, task
    assert server.base_url not in json.dumps(report) and "replies" not in json.dumps(report)


def test_image_options_must_be_one_kind_and_all_different(mmiu_plan):
    rows = [json.loads(line) for line in
            (mmiu_plan / "items" / "3d_depth_estimation.jsonl").read_text().splitlines()]  # fmt: skip
    assert check_task(rows, ShortcutGate())["verdict"] == "pass"
    twice = [dict(r) for r in rows]
    twice[0] = {**twice[0], "images": [*twice[0]["images"][:-1], twice[0]["images"][-2]]}
    result = check_task(twice, ShortcutGate())
    assert result["option_images"]["repeated_image"] == 1 and result["verdict"] == "fail"
    assert "1 item(s) with the same image twice among options" in result["why"]
    jpg = [dict(r) for r in rows]
    jpg[1] = {**jpg[1], "images": [*jpg[1]["images"][:-1], {**rows[1]["images"][0]}]}
    result = check_task(jpg, ShortcutGate())  # a colour JPEG among depth PNGs
    assert result["option_images"]["mixed_kind"] == 1 and result["verdict"] == "fail"
