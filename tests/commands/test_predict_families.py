"""``predict`` then ``score`` for every family: each family's prompt, written as its scorer reads.

Run on the sample project's published folders against a chat-completions server on 127.0.0.1.
The server answers every request with the gold answer it can find in the request (the tests
look the question up), so a score of 1.0 proves the rows landed on the right samples.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from chat_server import ChatServer, Reply

from benchsmith.cli import main


@pytest.fixture
def server(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ChatServer() as chat:
        chat.reply = lambda body: Reply("A")
        yield chat


def user_text(body: dict) -> str:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in content if p["type"] == "text")


def predict(published: Path, family: str, config: str, split: str, out: Path, server,
            *extra: str) -> list[dict]:  # fmt: skip
    argv = ["predict", str(published / family), "--config", config, "--split", split,
            "--model", "m", "--base-url", server.base_url, "--out", str(out),
            "--llm-cache", str(out.parent / "cache"), *extra]  # fmt: skip
    assert main(argv) == 0
    return [json.loads(line) for line in out.read_text("utf-8").splitlines()]


def score(published: Path, family: str, config: str, path: Path, capsys) -> dict:
    capsys.readouterr()
    assert main(["score", str(published / family), "--config", config,
                 "--predictions", str(path)]) == 0  # fmt: skip
    return json.loads(capsys.readouterr().out)


def test_multi_sends_images_text_and_a_system_prompt(sample_project, server, tmp_path, capsys):
    published = sample_project / "published"
    import datasets

    gold = datasets.load_dataset(str(published / "multi"), "questions", split="test")
    answers = {row["text"]: row["answer"] for row in gold}

    def gold_reply(body: dict) -> Reply:
        said = user_text(body)
        matches = [t for t in answers if t in said]
        return Reply(answers[max(matches, key=len)] if matches else "A")

    server.reply = gold_reply
    rows = predict(published, "multi", "questions", "test", tmp_path / "p.jsonl", server)
    assert sorted(r["question_id"] for r in rows) == sorted(gold["question_id"])
    assert set(rows[0]) == {"question_id", "model", "response", "cache_key"}
    first = server.requests[0].body["messages"]
    assert first[0]["role"] == "system" and "考试答题助手" in first[0]["content"]
    sent_images = sum(len(r.image_urls) for r in server.requests)
    assert sent_images == sum(len(row["images"]) for row in gold)
    report = score(published, "multi", "questions", tmp_path / "p.jsonl", capsys)
    assert report["missing"] == 0 and report["unknown_ids"] == 0
    assert report["per_type"]["SA"]["score"] == 1.0  # every SA landed on its own question


def test_vlicl_interleaves_demonstrations_per_shot_and_seed(sample_project, server, tmp_path,
                                                            capsys):  # fmt: skip
    published = sample_project / "published"
    rows = predict(published, "vlicl", "clevr", "query", tmp_path / "v.jsonl", server,
                   "--shots", "0", "2", "--seeds", "0")  # fmt: skip
    assert {(r["n_shot"], r["seed"]) for r in rows} == {(0, 0), (2, 0)}
    two_shot = next(r for r in server.requests if len(r.image_urls) == 3)
    parts = two_shot.body["messages"][0]["content"]
    kinds = [p["type"] for p in parts]
    assert kinds == ["text", "image_url", "text", "image_url", "text", "image_url", "text"]
    assert parts[2]["text"].startswith("Question: ") and "\nAnswer: " in parts[2]["text"]
    assert parts[-1]["text"].endswith("Answer:")
    report = score(published, "vlicl", "clevr", tmp_path / "v.jsonl", capsys)
    assert report["missing"] == 0 and report["unknown_ids"] == 0
    assert main(["predict", str(published / "mmiu"), "--config", "jigsaw_puzzle_solving",
                 "--split", "test", "--model", "m", "--base-url", server.base_url,
                 "--out", str(tmp_path / "x.jsonl"), "--shots", "2"]) == 2  # fmt: skip


def test_mmiu_and_mmneedle(sample_project, server, tmp_path, capsys):
    published = sample_project / "published"
    rows = predict(published, "mmiu", "jigsaw_puzzle_solving", "test", tmp_path / "j.jsonl",
                   server)  # fmt: skip
    assert set(rows[0]) == {"id", "model", "response", "cache_key"}
    text = server.requests[0].text
    assert text.endswith("Please answer the option directly like A,B,C,D...")
    report = score(published, "mmiu", "jigsaw_puzzle_solving", tmp_path / "j.jsonl", capsys)
    assert report["missing"] == 0 and report["overall"]["n"] == len(rows)
    # ScanNet images are references: predicting on them says how to rehydrate
    argv = ["predict", str(published / "mmiu"), "--config", "3d_pose_estimation", "--split",
            "test", "--model", "m", "--base-url", server.base_url, "--out",
            str(tmp_path / "p.jsonl"), "--llm-cache", str(tmp_path / "cache")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "rehydrate" in err and "--scannet DIR" in err and "--skip-references" in err
    assert main([*argv, "--text-only"]) == 0
    # rendered on the fly from the ScanNet copy the build read: the same images, in order, as
    # the folder `build mmiu rehydrate` writes (each checked by its sha256 as it is rendered)
    scannet = sample_project / "data" / "sources" / "scannet" / "ScanNet"
    requests_before = len(server.requests)
    rendered = tmp_path / "rendered.jsonl"
    argv[argv.index(str(tmp_path / "p.jsonl"))] = str(rendered)
    assert main([*argv, "--scannet", str(scannet)]) == 0
    sent = server.requests[requests_before:]
    assert sent and all(len(r.image_urls) > 0 for r in sent)
    rehydrated = tmp_path / "mmiu_full"
    assert main(["build", "mmiu", "rehydrate", str(published / "mmiu"), "--scannet", str(scannet),
                 "--out", str(rehydrated)]) == 0  # fmt: skip
    full = predict(tmp_path, "mmiu_full", "3d_pose_estimation", "test",
                   tmp_path / "full.jsonl", server)  # fmt: skip
    by_id = {r["id"]: r["cache_key"] for r in full}
    mine = [json.loads(line) for line in rendered.read_text("utf-8").splitlines()]
    assert {r["id"]: r["cache_key"] for r in mine} == by_id  # the same requests, byte for byte
    # or left out, counted
    skipped = tmp_path / "skipped.jsonl"
    argv[argv.index(str(rendered))] = str(skipped)
    capsys.readouterr()
    assert main([*argv, "--skip-references"]) == 0
    assert "left out" in capsys.readouterr().err and not skipped.exists()
    needle = predict(published, "mmneedle", "m1_n2_k1", "test", tmp_path / "n.jsonl", server)
    assert all(isinstance(r["sample_id"], int) for r in needle)
    last = server.requests[-1]
    assert len(last.image_urls) == 1 and "Answer the question using" not in last.text
    report = score(published, "mmneedle", "m1_n2_k1", tmp_path / "n.jsonl", capsys)
    assert report["missing"] == 0 and report["unknown_ids"] == 0


def test_vlicl_text_variants_send_words_and_score_as_their_image_task(sample_project, server,
                                                                      tmp_path, capsys):  # fmt: skip
    """``clevr_text`` sends no picture: every demonstration and the query are words, and a
    server that counts from the query's words alone scores 1.0; the image-query form sends the
    query's picture and nothing else."""
    published = sample_project / "published"
    attributes = ("size", "color", "material", "shape")

    def count_from_words(body: dict) -> Reply:
        question = user_text(body).rsplit("Question: ", 1)[1]
        description, asked = question.split("\n")[:2]
        attribute, value = asked.split(": ")
        objects = description.split(": ", 1)[1].rstrip(".").split("; ")
        named = [o.split(" ", 1)[1].split() for o in objects]
        return Reply(str(sum(o[attributes.index(attribute)] == value for o in named)))

    server.reply = count_from_words
    rows = predict(published, "vlicl", "clevr_text", "query", tmp_path / "t.jsonl", server,
                   "--shots", "0", "4", "--seeds", "1")  # fmt: skip
    assert rows and all(not r.image_urls for r in server.requests)
    four_shot = next(r for r in server.requests if r.text.count("Question: ") == 5)
    assert four_shot.text.count("The scene has ") == 5
    report = score(published, "vlicl", "clevr_text", tmp_path / "t.jsonl", capsys)
    assert report["overall"]["accuracy"] == 1.0 and report["missing"] == 0
    server.requests.clear()
    server.reply = lambda body: Reply("1")
    predict(published, "vlicl", "clevr_text_image_query", "query", tmp_path / "i.jsonl", server,
            "--shots", "2", "--seeds", "0")  # fmt: skip
    assert {len(r.image_urls) for r in server.requests} == {1}  # the query's picture only
