"""The text-to-image judge (scoring/vlicl_judge.py) against a judge served on 127.0.0.1: what it
asks (the image, the gold's concept, the original's prompts in --legacy), how replies decide,
CoBSAT's two questions, the cache, and generated images that are missing or changed."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from chat_server import ChatServer, Reply, Status
from PIL import Image

from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.generated_images import store_image
from benchsmith.scoring.vlicl_judge import (
    JUDGE_PROMPTS,
    JudgeSettings,
    score_vlicl_images,
    verdict,
)

COLOURS = {"red": (220, 20, 20), "blue": (20, 20, 220), "green": (20, 200, 20)}


def png(colour: str) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), COLOURS[colour]).save(buffer, format="PNG")
    return buffer.getvalue()


def colour_of(data: bytes) -> str:
    """The judge's 'vision': the colour whose RGB is the image's first pixel."""
    pixel = Image.open(io.BytesIO(data)).convert("RGB").getpixel((0, 0))
    return next(name for name, rgb in COLOURS.items() if rgb == pixel)


def published(tmp_path: Path, config: str, rows: list[dict]) -> Path:
    folder = tmp_path / "published"
    (folder / "data" / config).mkdir(parents=True)
    pq.write_table(
        pa.Table.from_pylist(rows), folder / "data" / config / "query-00000-of-00001.parquet"
    )
    return folder


def judge_by_colour(replies: dict[bool, str] | None = None):
    """A judge that answers 'yes' when the concept it is asked about names the image's colour
    (or, for CoBSAT's object questions, 'ball': every image shows a ball)."""
    replies = replies or {True: "Yes.", False: "No"}

    def reply(body: dict) -> Reply:
        content = body["messages"][0]["content"]
        url = next(p["image_url"]["url"] for p in content if p["type"] == "image_url")
        import base64

        image = base64.b64decode(url.split(",", 1)[1])
        text = next(p["text"] for p in content if p["type"] == "text")
        return Reply(replies[colour_of(image) in text or "ball" in text])

    return reply


def write_predictions(path: Path, rows: list[tuple[str, int, int, str | None]]) -> None:
    lines = []
    for query_id, n_shot, seed, colour in rows:
        row = {"query_id": query_id, "n_shot": n_shot, "seed": seed, "model": "painter"}
        if colour is None:
            row["response"] = None
        else:
            row["response"], row["image_sha256"] = store_image(path, png(colour))
        lines.append(json.dumps(row) + "\n")
    path.write_text("".join(lines), encoding="utf-8")


@pytest.fixture
def judge_server():
    with ChatServer(judge_by_colour()) as server:
        yield server


def settings(server: ChatServer, tmp_path: Path) -> JudgeSettings:
    return JudgeSettings("judge-7b", server.base_url, cache_dir=tmp_path / "cache")


def test_each_image_is_judged_for_its_gold_and_scored_per_shot(judge_server, tmp_path):
    folder = published(tmp_path, "open_t2i_mi", [
        {"id": f"open_t2i_mi/query/{i:05d}", "task": "open_t2i_mi", "answer": colour}
        for i, colour in enumerate(["red", "blue", "green"])])  # fmt: skip
    predictions = tmp_path / "run.jsonl"
    write_predictions(predictions, [
        ("open_t2i_mi/query/00000", 0, 0, "red"), ("open_t2i_mi/query/00001", 0, 0, "red"),
        ("open_t2i_mi/query/00002", 0, 0, None),  # null: missing
        ("open_t2i_mi/query/00000", 1, 0, "red"), ("open_t2i_mi/query/00001", 1, 0, "blue"),
        ("open_t2i_mi/query/00002", 1, 0, "green")])  # fmt: skip
    report = score_vlicl_images(
        folder, "open_t2i_mi", predictions, settings(judge_server, tmp_path)
    )
    assert report["per_shot"]["0"]["correct"] == 1 and report["per_shot"]["0"]["missing"] == 1
    assert report["per_shot"]["1"]["accuracy"] == 1.0 and report["overall"]["correct"] == 4
    assert report["judge"]["model"] == "judge-7b" and report["judge"]["questions"] == 5
    asked = judge_server.texts()
    assert sorted(asked) == sorted(JUDGE_PROMPTS["fixed"].format(concept=c)
                                   for c in ["red", "blue", "blue", "green"])  # fmt: skip
    assert all(len(r.image_urls) == 1 for r in judge_server.requests)
    again = score_vlicl_images(folder, "open_t2i_mi", predictions, settings(judge_server, tmp_path))
    assert len(judge_server.requests) == 4  # the red image of query 0 was asked once; then cached
    assert again["judge"]["requests"] == 0 and again["overall"] == report["overall"]


def test_legacy_sends_the_original_prompts_and_passes_any_yes(tmp_path):
    folder = published(tmp_path, "open_t2i_mi", [
        {"id": "q0", "task": "open_t2i_mi", "answer": "red"},
        {"id": "q1", "task": "open_t2i_mi", "answer": "blue"}])  # fmt: skip
    predictions = tmp_path / "run.jsonl"
    write_predictions(predictions, [("q0", 0, 0, "red"), ("q1", 0, 0, "red")])
    with ChatServer(judge_by_colour({True: "No, it has eyes.", False: "no"})) as server:
        fixed = score_vlicl_images(folder, "open_t2i_mi", predictions, settings(server, tmp_path))
        legacy = score_vlicl_images(folder, "open_t2i_mi", predictions, settings(server, tmp_path),
                                    mode="legacy")  # fmt: skip
        legacy_bodies = [r.body for r in server.requests[2:]]
    assert fixed["overall"]["correct"] == 0  # first word "No"
    assert legacy["overall"]["correct"] == 1  # "eyes" holds "yes", as in the original
    assert {b["messages"][0]["content"][1]["text"] for b in legacy_bodies} == {
        "Decide whether the image contains red. Answer with 'yes' or 'no'.\n",
        "Decide whether the image contains blue. Answer with 'yes' or 'no'.\n"}  # fmt: skip
    assert all(b["max_tokens"] == 5 for b in legacy_bodies)
    assert legacy["judge"]["rule"] == "'yes' in reply.lower()"


@pytest.mark.parametrize(("reply", "expected"), [
    ("yes", True), ("Yes.", True), ("**No**", False), ("no, it is a cat", False),
    ("The image shows a dog: yes", None), ("", None), ("yesterday", None)])  # fmt: skip
def test_fixed_rule_reads_the_first_word_only(reply, expected):
    assert verdict(reply, "fixed") is expected
    assert verdict(reply, "legacy") is ("yes" in reply.lower())


def test_cobsat_passes_only_when_latent_and_non_latent_both_pass(judge_server, tmp_path):
    # gold = [latent, non-latent]: q0 asks a red ball (both right), q1 a blue ball drawn red
    # (latent wrong), q2 a green box drawn green (non-latent "box" wrong: the judge sees a ball)
    folder = published(tmp_path, "cobsat", [
        {"id": "q0", "task": "cobsat", "answer": "red", "answers": ["red", "ball"]},
        {"id": "q1", "task": "cobsat", "answer": "blue", "answers": ["blue", "ball"]},
        {"id": "q2", "task": "cobsat", "answer": "green", "answers": ["green", "box"]}])  # fmt: skip
    predictions = tmp_path / "run.jsonl"
    write_predictions(
        predictions, [("q0", 2, 0, "red"), ("q1", 2, 0, "red"), ("q2", 2, 0, "green")]
    )
    report = score_vlicl_images(folder, "cobsat", predictions, settings(judge_server, tmp_path),
                                mode="legacy")  # fmt: skip
    overall = report["overall"]
    assert (overall["correct"], overall["latent"], overall["non_latent"]) == (1, 2 / 3, 2 / 3)
    assert len(judge_server.requests) == 5  # two per image; q0's and q1's "ball" are one
    legacy_ball = "Decide whether the image contains the following concept: ball. Answer with "
    assert legacy_ball + "'yes' or 'no'.\n" in judge_server.texts()


def test_a_changed_or_missing_image_names_its_line(judge_server, tmp_path):
    folder = published(
        tmp_path, "open_t2i_mi", [{"id": "q0", "task": "open_t2i_mi", "answer": "red"}]
    )
    predictions = tmp_path / "run.jsonl"
    write_predictions(predictions, [("q0", 0, 0, "red"), ("q0", 1, 0, "blue")])
    image = tmp_path / json.loads(predictions.read_text().splitlines()[1])["response"]
    assert hashlib.sha256(image.read_bytes()).hexdigest() == image.stem
    image.write_bytes(png("green"))
    with pytest.raises(BenchsmithError, match="has sha256") as info:
        score_vlicl_images(folder, "open_t2i_mi", predictions, settings(judge_server, tmp_path))
    assert f"{predictions}:2" in str(info.value)
    image.unlink()
    with pytest.raises(BenchsmithError, match="is missing") as info:
        score_vlicl_images(folder, "open_t2i_mi", predictions, settings(judge_server, tmp_path))
    assert "run-images/ folder" in str(info.value)
    assert judge_server.requests == []  # nothing asked before every image was read


def test_a_judge_that_fails_stops_with_the_fix(tmp_path):
    folder = published(
        tmp_path, "open_t2i_mi", [{"id": "q0", "task": "open_t2i_mi", "answer": "red"}]
    )
    predictions = tmp_path / "run.jsonl"
    write_predictions(predictions, [("q0", 0, 0, "red")])
    failing = ChatServer(lambda body: Status(404))
    with failing as server, pytest.raises(BenchsmithError, match="1 of 1 judge requests") as info:
        score_vlicl_images(folder, "open_t2i_mi", predictions, settings(server, tmp_path))
    assert "HTTP 404" in str(info.value) and "rerun" in str(info.value)
