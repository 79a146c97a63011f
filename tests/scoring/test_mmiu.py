"""``benchsmith score`` on a published MMIU folder: per task, per relationship, overall as the
mean of tasks, the circular config, the LLM judge and the legacy mode against a local server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from chat_server import ChatServer, Reply, Status

from benchsmith.builders.mmiu.config import TASK_RELATIONSHIP, TASKS, ShortcutGate
from benchsmith.builders.mmiu.publication import MmiuPublication
from benchsmith.builders.mmiu.shortcuts import check_plan
from benchsmith.cli import main
from benchsmith.hf.reader import read_columns
from benchsmith.publish.publisher import publish
from benchsmith.scoring.mmiu import score_mmiu


@pytest.fixture(scope="module")
def mmiu_dataset(mmiu_plan, tmp_path_factory) -> Path:
    plan = Path(shutil.copytree(mmiu_plan, tmp_path_factory.mktemp("score") / "plan"))
    check_plan(plan, ShortcutGate(), plan.parent / "shortcuts.json")
    out = plan.parent / "mmiu"
    publish(MmiuPublication(plan), out, "1.0.0")
    return out


def gold(folder: Path, config: str) -> list[dict]:
    return read_columns(folder, config, "test", ["id", "answer", "options"]).to_pylist()


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def wrong(letter: str) -> str:
    return "B" if letter == "A" else "A"


def test_per_task_relationship_and_overall(mmiu_dataset, tmp_path):
    rows = gold(mmiu_dataset, "3d_pose_estimation")
    replies = [{"id": r["id"], "response": f"Answer: {r['answer']}" if k < 9 else wrong(r["answer"])}
               for k, r in enumerate(rows)]  # fmt: skip
    report = score_mmiu(mmiu_dataset, "3d_pose_estimation", write(tmp_path / "p.jsonl", replies))
    task = report["per_task"]["3d_pose_estimation"]
    assert task["accuracy"] == 0.75 and task["n"] == 12 and task["by_step"]["cue"] == 9
    assert report["per_relationship"] == {"3D-spatial": 0.75}
    assert report["overall"]["accuracy"] == 0.75 and report["unparsed"] == 0
    assert report["refusals"] == 0


def test_refusals_are_counted_and_never_judged(mmiu_dataset, tmp_path):
    rows = gold(mmiu_dataset, "3d_pose_estimation")
    replies = [{"id": r["id"], "response": "image none" if k < 3 else f"故选{r['answer']}"}
               for k, r in enumerate(rows)]  # fmt: skip
    with ChatServer() as server:  # a judge that would answer "A" to anything asked
        server.script(*[Reply("A")] * len(rows))
        report = score_mmiu(mmiu_dataset, "3d_pose_estimation", write(tmp_path / "p.jsonl", replies),
                            judge_model="judge-m", judge_base_url=server.base_url,
                            judge_cache=str(tmp_path / "c"))  # fmt: skip
        assert server.requests == []
    assert report["refusals"] == 3 and report["judge"]["asked"] == 0
    assert report["per_task"]["3d_pose_estimation"]["correct"] == len(rows) - 3


def test_circular_needs_every_rotation_right(mmiu_dataset, tmp_path):
    rows = read_columns(mmiu_dataset, "circular", "test", ["id", "item_id", "answer", "task"])
    rows = rows.to_pylist()
    spoiled = {r["item_id"] for r in rows if r["task"] == "jigsaw_puzzle_solving"}
    spoiled = sorted(spoiled)[:3]
    replies = []
    for r in rows:
        bad = r["item_id"] in spoiled and r["id"].endswith("/r1")
        replies.append({"id": r["id"], "response": wrong(r["answer"]) if bad else r["answer"]})
    report = score_mmiu(mmiu_dataset, "circular", write(tmp_path / "c.jsonl", replies))
    assert report["circular"] and set(report["per_task"]) == set(TASKS)
    assert report["per_task"]["jigsaw_puzzle_solving"]["accuracy"] == 9 / 12
    assert report["per_task"]["3d_depth_estimation"]["accuracy"] == 1.0
    means = {}
    for task, block in report["per_task"].items():
        means.setdefault(TASK_RELATIONSHIP[task], []).append(block["accuracy"])
    assert report["per_relationship"] == {k: sum(v) / len(v) for k, v in sorted(means.items())}
    assert report["overall"]["accuracy"] == pytest.approx((6 + 9 / 12) / 7)


def test_judge_maps_unparsed_replies_through_the_local_server(mmiu_dataset, tmp_path):
    rows = gold(mmiu_dataset, "jigsaw_puzzle_solving")
    replies = [{"id": r["id"], "response": "the pieces go top-left first"} for r in rows]
    path = write(tmp_path / "j.jsonl", replies)
    plain = score_mmiu(mmiu_dataset, "jigsaw_puzzle_solving", path)
    assert plain["unparsed"] == 12 and plain["overall"]["accuracy"] == 0.0
    answers = {r["id"]: r["answer"] for r in rows}
    with ChatServer(reply=lambda body: Reply("B")) as server:
        report = score_mmiu(mmiu_dataset, "jigsaw_puzzle_solving", path, judge_model="judge-m",
                            judge_base_url=server.base_url, judge_cache=str(tmp_path / "c"))  # fmt: skip
        assert len(server.requests) == 12 and server.requests[0].body["model"] == "judge-m"
    expected = sum(a == "B" for a in answers.values()) / 12
    assert report["overall"]["accuracy"] == expected and report["judge"]["asked"] == 12
    assert report["per_task"]["jigsaw_puzzle_solving"]["by_step"] == {"judge": 12}


def test_legacy_reproduces_the_official_rules(mmiu_dataset, tmp_path):
    rows = gold(mmiu_dataset, "image_spatial_transformation_estimation")
    replies = []
    for k, r in enumerate(rows):
        kind = k % 4
        text = {0: r["answer"].lower(), 1: f"({r['answer']}).", 2: "model error",
                3: "The answer is " + r["answer"]}[kind]  # fmt: skip
        replies.append({"id": r["id"], "response": text, "model": "X"})
    path = write(tmp_path / "l.jsonl", replies)
    without = score_mmiu(mmiu_dataset, "image_spatial_transformation_estimation", path,
                         legacy=True)  # fmt: skip
    block = without["per_task"]["image_spatial_transformation_estimation"]
    assert without["needs_judge"] == 3 and block["dropped"] == 3
    assert block["n"] == 9 and block["correct"] == 6  # letters right, "model error" is Z
    with ChatServer() as server:
        server.script(Reply("A."), Status(400), Reply(" "))
        judged = score_mmiu(mmiu_dataset, "image_spatial_transformation_estimation", path,
                            legacy=True, judge_base_url=server.base_url,
                            judge_cache=str(tmp_path / "lc"))  # fmt: skip
        assert all(r.body["model"] == "gpt-4o-mini" for r in server.requests)
        assert "Question: Which transformation" in server.requests[0].text
    block = judged["per_task"]["image_spatial_transformation_estimation"]
    # "A." is never a substring of a letter; the 400 is a GPT error (dropped); " " is right
    assert block["dropped"] == 1 and block["n"] == 11 and block["correct"] == 7


def test_score_cli_and_reference_predictions(mmiu_dataset, tmp_path, capsys):
    from benchsmith.scoring import SCORERS

    scorer = SCORERS.get("mmiu")
    for config in (*TASKS, "circular"):
        rows = scorer.reference_predictions(mmiu_dataset, config)
        path = write(tmp_path / f"{config}.jsonl", rows)
        assert main(["score", str(mmiu_dataset), "--config", config, "--predictions",
                     str(path)]) == 0  # fmt: skip
        assert json.loads(capsys.readouterr().out)["overall"]["accuracy"] == 1.0
    write(tmp_path / "dup.jsonl", [{"id": "3d_pose_estimation_00000", "response": "A"}] * 2)
    assert main(["score", str(mmiu_dataset), "--config", "3d_pose_estimation", "--predictions",
                 str(tmp_path / "dup.jsonl")]) == 2  # fmt: skip
    assert "second row for '3d_pose_estimation_00000'" in capsys.readouterr().err
