"""``benchsmith curate`` end to end on an HF-layout dataset, with a real 127.0.0.1 LLM server."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pyarrow.parquet as pq
import pytest
from chat_server import ChatServer, Reply, Status
from curate_fixtures import N, gold_letter, write_corpus, write_judges, write_mcq_dataset

from benchsmith.cli import main


@pytest.fixture()
def dataset(tmp_path) -> Path:
    return write_mcq_dataset(tmp_path / "toy", n=N)


def decisions_of(out: Path) -> dict[str, list[dict]]:
    by_sample: dict[str, list[dict]] = {}
    for row in pq.read_table(out / "decisions.parquet").to_pylist():
        by_sample.setdefault(row["sample_id"], []).append(row)
    return by_sample


def drop_reason(rows: list[dict]) -> str | None:
    return next((r["reason"] for r in rows if r["action"] == "drop"), None)


def offline_args(dataset: Path, out: Path, judges: list[Path], corpus: Path) -> list[str]:
    return [
        "curate",
        str(dataset),
        "--config",
        "vqa",
        "--split",
        "test",
        "--out",
        str(out),
        "--judges",
        *map(str, judges),
        "--against-split",
        "support",
        "--blind-threshold",
        "0.05",
        "--reference-corpus",
        str(corpus),
        "--target-size",
        "3",
        "--seed",
        "7",
        "--params",
        str(out.parent / "none.yaml"),
    ]


def test_offline_stages_decide_every_planted_problem(dataset, tmp_path, capsys):
    (tmp_path / "none.yaml").write_text("{}\n")
    judges = write_judges(tmp_path / "judges")
    out = tmp_path / "curated"
    assert main(offline_args(dataset, out, judges, write_corpus(tmp_path))) == 0
    decided = decisions_of(out)
    assert len(decided) == N
    # difficulty: n_correct = i % 10 of 9 judges; paper bins drop easy (>= 6)
    for i in range(N):
        first = decided[f"q{i:03d}"][0]
        assert first["stage"] == "difficulty"
        evidence = json.loads(first["evidence"])
        assert first["action"] == ("drop" if i % 10 >= 6 else "keep"), (i, first)
        if i % 10 >= 6:
            assert first["reason"] == "EASY"
        assert evidence  # judge evidence recorded
    # planted leakage (samples that survived difficulty)
    assert drop_reason(decided["q005"]) == "DUPLICATE_IMAGE"
    assert drop_reason(decided["q009"]) == "EASY"  # dropped before the image stage ...
    assert len(decided["q009"]) == 1  # ... so later stages never saw it
    assert drop_reason(decided["q003"]) == "BLIND_SHORTCUT"
    assert drop_reason(decided["q013"]) == "BLIND_SHORTCUT"
    assert drop_reason(decided["q011"]) == "NGRAM_OVERLAP"
    # final draw: 3 per subtask among survivors, the rest NOT_SAMPLED
    table = datasets.load_dataset(str(out), "vqa", split="test")
    assert len(table) == 6
    assert sorted(table.unique("subtask")) == ["charts", "scenes"]
    assert set(table["difficulty"]) <= {"hard", "middle", "zero_pass"}
    assert all(row["n_correct"] == int(row["id"][1:]) % 10 for row in table)
    not_sampled = [s for s, rows in decided.items() if drop_reason(rows) == "NOT_SAMPLED"]
    assert len(not_sampled) + 6 == sum(
        1 for rows in decided.values() if drop_reason(rows) in (None, "NOT_SAMPLED")
    )
    # provenance of a kept row carries its curation decisions
    stages = [d["stage"] for d in table[0]["provenance"]["decisions"]]
    assert stages[0] == "curate/difficulty" and stages[-1] == "curate/final_draw"
    card = (out / "README.md").read_text(encoding="utf-8")
    for text in ("BLIND_SHORTCUT", "NGRAM_OVERLAP", "DUPLICATE_IMAGE", "final_draw", "EASY"):
        assert text in card
    summary = capsys.readouterr().out
    assert "kept 6 of 40" in summary


def test_cross_split_duplicate_and_rerun_is_identical(dataset, tmp_path):
    (tmp_path / "none.yaml").write_text("{}\n")
    corpus = write_corpus(tmp_path)
    args = ["--no-blind", "--against-split", "support", "--reference-corpus", str(corpus)]
    outs = []
    for name in ("a", "b"):
        out = tmp_path / name
        base = ["curate", str(dataset), "--config", "vqa", "--out", str(out), "--seed", "3"]
        assert main([*base, *args, "--params", str(tmp_path / "none.yaml")]) == 0
        outs.append(out)
    decided = decisions_of(outs[0])
    assert drop_reason(decided["q009"]) == "DUPLICATE_IMAGE"
    evidence = json.loads(next(r for r in decided["q009"] if r["action"] == "drop")["evidence"])
    assert evidence["findings"][0]["scope"].startswith("across_splits")
    assert drop_reason(decided["q007"]) is None  # a near duplicate of q008 is not a leak
    files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file())
    for rel in files:
        if rel.name != "build_info.json":
            assert (outs[0] / rel).read_bytes() == (outs[1] / rel).read_bytes(), rel


def test_llm_stages_review_and_text_only_resume_from_cache(dataset, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-marker-123")
    # one quick retry: the outages below fail every request, and each retry waits
    (tmp_path / "none.yaml").write_text("curate: {llm: {max_retries: 1, retry_wait_s: 0.01}}\n")
    judges = write_judges(tmp_path / "judges")
    verdicts = tmp_path / "annotations" / "verdicts.jsonl"
    verdicts.parent.mkdir()
    verdicts.write_text(
        json.dumps({"sample_id": "q020", "verdict": "accept", "reviewer": "ann", "note": "ok"})
        + "\n"
    )

    def reply(body):
        text = "\n".join(
            part.get("text", "") if isinstance(part, dict) else str(part)
            for m in body["messages"]
            for part in (m["content"] if isinstance(m["content"], list) else [m["content"]])
        )
        if body["model"] == "reviewer":
            if "picture number 10 " in text:
                return Reply("Judgement: NO")
            if "picture number 20 " in text:
                return Reply("the gold answer might be fine")
            if "picture number 30 " in text:
                return Status(500)
            return Reply("Judgement: YES")
        # text-only: the blind LLM "knows" samples 1 and 2
        for i in (1, 2):
            if f"picture number {i} " in text:
                return Reply(gold_letter(i))
        return Reply("I cannot tell without the image")

    def run(server, out, *extra, cache="cache"):
        return main(
            [
                "curate",
                str(dataset),
                "--config",
                "vqa",
                "--out",
                str(out),
                "--judges",
                *map(str, judges),
                "--review-model",
                "reviewer",
                "--human-verdicts",
                str(verdicts),
                "--text-only-model",
                "blind-llm",
                "--base-url",
                server.base_url,
                "--llm-cache",
                str(tmp_path / cache),
                "--no-blind",
                "--no-image-check",
                "--params",
                str(tmp_path / "none.yaml"),
                *extra,
            ]
        )

    out = tmp_path / "out"
    with ChatServer(reply=reply) as server:
        # the review of q030 fails: undecided, so nothing is published and the run fails
        assert run(server, out) == 1
        assert not out.exists()
        review = [r for r in server.requests if r.body["model"] == "reviewer"]
        text_only = [r for r in server.requests if r.body["model"] == "blind-llm"]
        assert review and all(r.has_image for r in review)
        assert text_only and not any(r.has_image for r in text_only)
    err = capsys.readouterr().err
    assert "1 sample(s) undecided" in err and "ZERO_PASS_LLM_ERROR 1" in err
    assert "nothing published" in err and "--publish-undecided" in err
    # rerun with a healthy server: only the failed review is sent (the undecided sample was
    # kept, so its text-only question was already asked and answered); the rest is cached
    with ChatServer(reply=lambda body: Reply("Judgement: YES")) as server:
        assert run(server, out) == 0
        sent = sorted((r.body["model"], "picture number 30 " in r.text) for r in server.requests)
        assert sent == [("reviewer", True)]
        # a rerun answered wholly from the cache publishes the same bytes: run statistics
        # (requests, cache hits) are printed, never written into build_info.json or the card
        first = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
        server.requests.clear()
        assert run(server, out) == 0
        assert server.requests == []
        assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == first
        assert "cache_hits" in capsys.readouterr().err
    decided = decisions_of(out)
    assert drop_reason(decided["q000"]) is None  # zero pass, reviewer says YES
    assert drop_reason(decided["q010"]) == "ZERO_PASS_LLM_REJECT"
    assert drop_reason(decided["q020"]) is None  # unparseable, but a human accepted it
    assert drop_reason(decided["q030"]) is None  # decided on the rerun
    assert drop_reason(decided["q001"]) == "TEXT_ONLY_ANSWERABLE"
    assert drop_reason(decided["q002"]) == "TEXT_ONLY_ANSWERABLE"
    assert drop_reason(decided["q004"]) is None
    # an outage (fresh cache, server answering 503) never replaces the good dataset...
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with ChatServer(reply=lambda body: Status(503)) as down:
        assert run(down, out, cache="cold") == 1
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    capsys.readouterr()
    # ...unless asked to: then the undecided samples are kept, counted, and the card says so
    with ChatServer(reply=lambda body: Status(503)) as down:
        assert run(down, tmp_path / "partial", "--publish-undecided", cache="cold") == 0
    partial = decisions_of(tmp_path / "partial")
    undecided = {
        k for k, rows in partial.items() if any("LLM_ERROR" in (r["reason"] or "") for r in rows)
    }
    assert undecided and all(drop_reason(partial[k]) is None for k in undecided)
    card = (tmp_path / "partial" / "README.md").read_text()
    assert f"Undecided: {len(undecided)} kept sample(s)" in card
    for path in [*out.rglob("*"), *(tmp_path / "cache").rglob("*")]:
        if path.is_file():
            assert b"sk-secret-marker-123" not in path.read_bytes(), path


def test_audit_shows_decisions_and_catches_a_changed_source(dataset, tmp_path, capsys):
    (tmp_path / "none.yaml").write_text("{}\n")
    out = tmp_path / "curated"
    base = ["curate", str(dataset), "--config", "vqa", "--out", str(out), "--no-blind"]
    assert main([*base, "--params", str(tmp_path / "none.yaml")]) == 0
    capsys.readouterr()
    assert main(["audit", str(out), "--config", "vqa", "--id", "q004"]) == 0
    text = capsys.readouterr().out
    assert "OK" in text and "image_duplicates" in text
    assert main(["audit", str(out), "--config", "vqa", "--id", "q005"]) == 0
    assert "DUPLICATE_IMAGE" in capsys.readouterr().out
    # rewrite the source split with one answer changed: the audit names the source row
    source = next((dataset / "data" / "vqa").glob("test-*.parquet"))
    table = pq.read_table(source)
    answers = table.column("answer").to_pylist()
    answers[4] = "D" if answers[4] != "D" else "A"
    import pyarrow as pa

    table = table.set_column(table.schema.get_field_index("answer"), "answer", pa.array(answers))
    pq.write_table(table, source)
    assert main(["audit", str(out), "--config", "vqa", "--id", "q004"]) == 1
    text = capsys.readouterr().out
    assert "FAIL" in text and "q004" in text


def test_bad_inputs_name_the_file(dataset, tmp_path, capsys):
    (tmp_path / "none.yaml").write_text("{}\n")
    bad = tmp_path / "judge.jsonl"
    bad.write_text('{"sample_id": "q000", "model": "m", "response": "A"}\n{not json\n')
    code = main(
        [
            "curate",
            str(dataset),
            "--config",
            "vqa",
            "--out",
            str(tmp_path / "o"),
            "--judges",
            str(bad),
            "--params",
            str(tmp_path / "none.yaml"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "judge.jsonl" in err and "2" in err
    assert not (tmp_path / "o").exists()
    code = main(
        ["curate", str(dataset), "--config", "nope", "--out", str(tmp_path / "o"), "--no-blind"]
    )
    assert code == 2
    assert "vqa" in capsys.readouterr().err  # lists the configs that exist


@pytest.mark.parametrize(
    "run_flags",
    [["--image-workers", "2"], ["--image-executor", "ray", "--image-workers", "2"]],
    ids=["local-2", "ray-2"],
)
def test_image_stage_output_does_not_depend_on_workers_or_executor(
    run_flags, request, dataset, tmp_path
):
    if "ray" in run_flags:
        request.getfixturevalue("ray_cluster")
    (tmp_path / "none.yaml").write_text("{}\n")
    outs = []
    for name, extra in (("one", []), ("many", run_flags)):
        out = tmp_path / "runs" / name / "curated"  # same depth: same relative source roots
        args = ["curate", str(dataset), "--config", "vqa", "--out", str(out), "--seed", "3",
                "--no-blind", "--against-split", "support", "--params",
                str(tmp_path / "none.yaml"), *extra]  # fmt: skip
        assert main(args) == 0
        outs.append(out)
    assert drop_reason(decisions_of(outs[0])["q009"]) == "DUPLICATE_IMAGE"  # the stage ran
    files = sorted(p.relative_to(outs[0]) for p in outs[0].rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(outs[1]) for p in outs[1].rglob("*") if p.is_file())
    for rel in files:  # build_info.json too: workers and executor are not in the params hash
        assert (outs[0] / rel).read_bytes() == (outs[1] / rel).read_bytes(), rel
