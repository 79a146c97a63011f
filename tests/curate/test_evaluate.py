"""A curated folder is predicted and scored as the family its rows came from.

Every curated target of the sample build is predicted beside its family's own folder (same
config and split) against a chat server on 127.0.0.1 that answers a function of what it is sent.
A curated row must go out exactly as the family's row does (same prompt, system prompt,
demonstrations and images: the same request digest, ``cache_key``) under the same id fields, and
only the kept rows; ``score`` then reads the curated predictions with the family's scorer, every
kept row found and nothing else.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from chat_server import ChatServer, Reply

from benchsmith.cli import main

TARGETS = ("mmiu_jigsaw", "mmneedle_m1_n2_k1", "multi_questions", "vlicl_clevr_query")
EPISODES = {"vlicl": ("--shots", "0", "2", "--seeds", "0")}


def answer(body: dict) -> Reply:
    """A reply that depends only on the request: the same request, the same answer."""
    digest = hashlib.sha256(json.dumps(body["messages"], sort_keys=True).encode()).digest()
    return Reply("ABCD"[digest[0] % 4])


def predict(folder: Path, config: str, split: str, out: Path, server, *extra: str) -> list[dict]:
    argv = ["predict", str(folder), "--config", config, "--split", split, "--model", "m",
            "--base-url", server.base_url, "--out", str(out), "--llm-cache",
            str(out.with_suffix(".cache")), *extra]  # fmt: skip
    assert main(argv) == 0
    return [json.loads(line) for line in out.read_text("utf-8").splitlines()]


def kept_ids(folder: Path, config: str, split: str, id_column: str) -> set[str]:
    import pyarrow.parquet as pq

    files = sorted((folder / "data" / config).glob(f"{split}-*.parquet"))
    return {str(v) for f in files for v in pq.read_table(f, columns=[id_column])[id_column]}


@pytest.mark.parametrize("target", TARGETS)
def test_a_curated_target_is_sent_and_scored_like_its_family(sample_project, tmp_path, capsys,
                                                             monkeypatch, target):  # fmt: skip
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    curated = sample_project / "published" / "curated" / target
    assert curated.is_dir(), f"the sample build has no curated target {target}"
    source = json.loads((curated / "build_info.json").read_text("utf-8"))["source"]
    family, config, split = source["family"], source["config"], source["split"]
    key = "query_id" if family == "vlicl" else source["columns"]["id"]
    kept = kept_ids(curated, config, split, source["columns"]["id"])
    extra = EPISODES.get(family, ())
    with ChatServer(reply=answer) as server:
        mine = predict(curated, config, split, tmp_path / "curated.jsonl", server, *extra)
        theirs = predict(sample_project / "published" / family, config, split,
                         tmp_path / "family.jsonl", server, *extra)  # fmt: skip

    def by_request(rows):
        return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True))

    assert {str(r[key]) for r in mine} == kept
    assert by_request(mine) == by_request([r for r in theirs if str(r[key]) in kept])

    capsys.readouterr()
    assert main(["score", str(curated), "--config", config,
                 "--predictions", str(tmp_path / "curated.jsonl")]) == 0  # fmt: skip
    report = json.loads(capsys.readouterr().out)
    assert report.get("missing", 0) == 0 and report.get("unknown_ids", 0) == 0, report


def test_a_moved_source_is_named_with_the_flag_that_finds_it(sample_project, tmp_path, capsys):
    curated = tmp_path / "vlicl_clevr_query"
    shutil.copytree(sample_project / "published" / "curated" / "vlicl_clevr_query", curated)
    argv = ["predict", str(curated), "--config", "clevr", "--split", "query", "--model", "m",
            "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "p.jsonl"),
            "--max-retries", "0"]  # fmt: skip
    assert main(argv) != 0
    err = capsys.readouterr().err
    assert "source" in err and "--root source=DIR" in err
    assert not (tmp_path / "p.jsonl").exists()
    # found again with --root: the source family's requests (the server is down: first error)
    moved = ["--root", f"source={sample_project / 'published' / 'vlicl'}"]
    assert main([*argv, *moved, "--shots", "0"]) != 0
    assert "--root" not in capsys.readouterr().err


def test_only_the_kept_rows_are_sent(sample_project, tmp_path, capsys, monkeypatch):
    """A subset that kept fewer rows than its source sends only those (the sample build's
    curation keeps every row of some targets, so rows are dropped here from a copy)."""
    import pyarrow.parquet as pq

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    curated = tmp_path / "multi_questions"
    shutil.copytree(sample_project / "published" / "curated" / "multi_questions", curated)
    (shard,) = (curated / "data" / "questions").glob("test-*.parquet")
    table = pq.read_table(shard)
    pq.write_table(table.slice(0, table.num_rows // 2), shard)
    kept = kept_ids(curated, "questions", "test", "question_id")
    assert 0 < len(kept) < table.num_rows
    moved = ("--root", f"source={sample_project / 'published' / 'multi'}")
    with ChatServer(reply=answer) as server:
        rows = predict(curated, "questions", "test", tmp_path / "p.jsonl", server, *moved)
    assert sorted(str(r["question_id"]) for r in rows) == sorted(kept)
    assert server.requests[0].body["messages"][0]["role"] == "system"  # MULTI's own prompt
