"""Elite: the published hard list as is, or a seeded re-selection from judge runs."""

from __future__ import annotations

import json
import math

import pytest

from benchsmith.builders.multi.config import Elite, MultiConfig
from benchsmith.builders.multi.elite import elite_ids, reselect_elite
from benchsmith.builders.multi.plan import select_questions
from benchsmith.cli import main
from benchsmith.core.errors import BenchsmithError


def question(qid: str, kind: str, code: str = "czsx", images: int = 0, difficulty: float = 1):
    return {"question_id": qid, "question_type": kind, "answer": "A", "subject_code": code,
            "num_images": images, "image_class": "NI" if not images else "SI",
            "difficulty": difficulty, "quality": 1.0}  # fmt: skip


def test_buckets_fill_ma_fb_sa_by_failure_score_and_the_draw_is_seeded():
    rows = [question(f"sa{k}", "SA") for k in range(80)]
    rows += [question(f"ma{k}", "MA") for k in range(30)] + [
        question(f"fb{k}", "FB") for k in range(30)
    ]
    rows += [question(f"img{k}", "SA", images=1) for k in range(5)]
    rows += [question(f"jk{k}", "SA", code="shjk") for k in range(20)]
    # run "strong" gets everything right except the odd-numbered questions; "blind" is text-only
    strong = {r["question_id"]: (float(int(r["question_id"][-1]) % 2 == 0), 1.0) for r in rows}
    blind = {r["question_id"]: (0.0, 1.0) for r in rows}
    drawn, report = reselect_elite(rows, {"strong": strong, "blind": blind},
                                   {"strong": 60.0, "blind": 30.0}, ["blind"], size=40, seed=3)  # fmt: skip
    target = 2 * 30  # NI x school subject
    bucket = report["buckets"]["NI/sx"]
    assert bucket["target"] == target and bucket["candidates"] == target
    assert report["buckets"]["NI/jk"]["target"] == 2 * 5  # society subject column
    assert len(drawn) == 40 and drawn == reselect_elite(
        rows, {"strong": strong, "blind": blind}, {"strong": 60.0, "blind": 30.0}, ["blind"],
        size=40, seed=3)[0]  # fmt: skip
    assert drawn != reselect_elite(rows, {"strong": strong, "blind": blind},
                                   {"strong": 60.0, "blind": 30.0}, ["blind"], 40, seed=4)[0]  # fmt: skip
    everything, _ = reselect_elite(rows, {"strong": strong}, {"strong": 60.0}, [], 10_000, 0)
    picked_ma = [q for q in everything if q.startswith("ma")]
    assert len(picked_ma) == math.ceil(target / 4)
    assert all(int(q[-1]) % 2 == 1 for q in picked_ma)  # the failed ones first
    assert len([q for q in everything if q.startswith("fb")]) == math.floor(target / 4)


def test_hard_list_modes(multi_build, tmp_path):
    present = {"czsx_0_0", "gzsw_0_0"}
    ids, info = elite_ids(Elite(), multi_build["release"], present, base=tmp_path)
    assert ids == present and info["not_in_plan"] == ["shxc_0_0", "gzwl_0_0"]
    assert elite_ids(Elite(mode="none"), multi_build["release"], present, base=tmp_path)[0] == set()
    with pytest.raises(BenchsmithError, match="hard list file missing"):
        elite_ids(Elite(mode="file", hard_list="nope.json"), None, present, base=tmp_path)
    (tmp_path / "bad.json").write_text('{"not": "a list"}')
    with pytest.raises(BenchsmithError, match="not a JSON array"):
        elite_ids(Elite(mode="file", hard_list="bad.json"), None, present, base=tmp_path)


def test_elite_command_writes_a_hard_list_the_select_step_uses(multi_build, tmp_path, monkeypatch):
    plan = multi_build["plan"]
    run = tmp_path / "judge.jsonl"
    rows = [json.loads(x) for x in (plan / "questions.jsonl").read_text("utf-8").splitlines()]
    run.write_text("".join(json.dumps({"question_id": r["question_id"], "response": "Z"}) + "\n"
                           for r in rows))  # fmt: skip
    out = tmp_path / "hard.json"
    assert main(["build", "multi", "elite", str(plan), "--run", f"judge={run}",
                 "--size", "3", "--seed", "1", "--out", str(out)]) == 0  # fmt: skip
    drawn = json.loads(out.read_text())
    assert len(drawn) == 3 and set(drawn) <= {r["question_id"] for r in rows}
    report = json.loads((tmp_path / "hard.report.json").read_text())
    assert report["weights"] == {"judge": 0.0} and "not the published" in report["note"]
    monkeypatch.chdir(tmp_path)
    config = MultiConfig(elite=Elite(mode="file", hard_list="hard.json"))
    info = select_questions(multi_build["questions"], config, tmp_path / "plan")
    assert sorted(info["elite"]["ids"]) == sorted(drawn) and info["counts"]["elite"] == 3
    assert main(["build", "multi", "elite", str(plan), "--run", "broken",
                 "--out", str(out)]) == 2  # fmt: skip
