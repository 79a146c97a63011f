"""The release's 2-way text-to-image tasks ingested (``open_t2i_mi``, ``fast_count_t2i``,
``fast_attr_t2i``): rows with the original's demo prompts, episodes that replay the original's
``select_demonstration`` per sample, and predict sending each prompt before its image."""

from __future__ import annotations

import base64
import copy
import hashlib
import io
import json
import random
from pathlib import Path

import pytest
from chat_server import ChatServer, ImageReply
from PIL import Image
from t2i_release import CLASSES, REAL, SHOTS_STORED, TASKS, caption, colour, write_t2i_release
from vlicl_fixtures import publish_ingested

from benchsmith.builders.vlicl import ImageHashes
from benchsmith.builders.vlicl.config import VliclConfig
from benchsmith.builders.vlicl.episodes import build_episodes
from benchsmith.builders.vlicl.ingest import ingest_task
from benchsmith.builders.vlicl.plan import VliclSources, build_vlicl
from benchsmith.cli import main
from benchsmith.core.errors import PlanError

SHOTS = (0, 1, 2, 4, 5)


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return write_t2i_release(tmp_path_factory.mktemp("t2i") / "VL-ICL")


def pixel(data: bytes) -> tuple[int, int, int]:
    return Image.open(io.BytesIO(data)).convert("RGB").getpixel((0, 0))


@pytest.mark.parametrize("task", TASKS)
def test_rows_carry_the_original_prompts_and_each_stored_image(release, task):
    rows = ingest_task(release, task, ImageHashes())
    assert len(rows.query) == 2 and len(rows.support) == 2 * len(CLASSES) * SHOTS_STORED
    t = TASKS.index(task)
    for row in rows.support:
        episode, position, shot = (int(v) for v in row["id"].rsplit("/", 1)[1].split("-"))
        key = row["extras"]["word"]
        assert key == CLASSES[position] and row["extras"]["class_name"] == REAL[key]
        expected = {"open_t2i_mi": f"Generate a {key}",
                    "fast_count_t2i": f"Generate {caption(task, key, shot)}",
                    "fast_attr_t2i": f"Generate a {caption(task, key, shot)}"}[task]  # fmt: skip
        assert row["question"] == expected
        [ref] = row["images"]
        data = (release / ref["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == ref["sha256"]
        assert pixel(data) == colour(t, episode, position, shot)
    for row in rows.query:
        assert row["images"] == [] and row["extras"]["class_name"] == row["answer"]
        assert REAL[row["extras"]["query_word"]] in row["answer"]
    assert [bool(r["sources"]) for r in rows.query] == [True, False]  # reference image, or id


def original_select(query_meta: list[dict], task: str, seed: int) -> dict:
    """The original's T2I loop (T2I_inference.py, utils/ICL_utils.py), written from its code:
    seed once; per shot count, per query: a distractor by random.choice, the order by
    random.choice([True, False]), then shot i of each class in that order."""
    stream = random.Random(seed)
    out = {}
    for n_shot in SHOTS:
        for k, query in enumerate(copy.deepcopy(query_meta)):
            label = query["task_label"]
            other = stream.choice([c for c in query["classes"] if c != label])
            order = [label, other] if stream.choice([True, False]) else [other, label]
            out[(n_shot, k)] = [(key, i) for i in range(n_shot) for key in order]
    return out


@pytest.mark.parametrize("task", TASKS)
def test_legacy_episodes_replay_the_original_per_sample(release, task):
    rows = ingest_task(release, task, ImageHashes())
    episodes, _ = build_episodes(task, rows.support, rows.query, shots=SHOTS, seeds=(0, 3),
                                 samplers=("legacy", "hashed"))  # fmt: skip
    support = {r["id"]: r for r in rows.support}
    query_meta = json.loads((release / task / "query.json").read_text())
    for seed in (0, 3):
        expected = original_select(query_meta, task, seed)
        for episode in (e for e in episodes if e["sampler"] == "legacy" and e["seed"] == seed):
            k = int(episode["query_id"].rsplit("/", 1)[1])
            got = [(support[i]["extras"]["word"], support[i]["extras"]["shot_index"])
                   for i in episode["demo_ids"]]  # fmt: skip
            assert got == expected[(episode["n_shot"], k)], episode
    label_of = {r["id"]: r["extras"]["query_word"] for r in rows.query}
    for episode in episodes:  # both samplers: the query's class is in every non-empty episode
        words = [support[i]["extras"]["word"] for i in episode["demo_ids"]]
        assert not words or label_of[episode["query_id"]] in words


def test_shots_past_the_stored_images_name_the_key(release, tmp_path):
    config = VliclConfig.from_params({"mode": "ingest", "tasks": ["fast_attr_t2i"],
                                      "shots": {"fast_attr_t2i": [0, 6]}}, "sample")  # fmt: skip
    with pytest.raises(PlanError, match="6-shot needs 6 stored images") as info:
        build_vlicl(config, VliclSources(ingest=release), tmp_path / "b")
    assert "vlicl.shots.fast_attr_t2i" in str(info.value)


def test_predict_sends_each_prompt_before_its_image(release, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    published = publish_ingested(release, list(TASKS), tmp_path)
    grey = io.BytesIO()
    Image.new("RGB", (8, 8), (128, 128, 128)).save(grey, format="PNG")
    with ChatServer(lambda body: ImageReply(grey.getvalue())) as server:
        out = tmp_path / "gen.jsonl"
        assert main([str(a) for a in ["predict", published, "--config", "fast_count_t2i",
                                      "--shots", "2", "--seeds", "0", "--model", "painter",
                                      "--base-url", server.base_url, "--out", out,
                                      "--llm-cache", tmp_path / "c"]]) == 0  # fmt: skip
        bodies = [r.body for r in server.requests]
    assert len(bodies) == 2 and all(b["modalities"] == ["image", "text"] for b in bodies)
    for body in bodies:
        parts = body["messages"][0]["content"]
        kinds = ["text" if p["type"] == "text" else "image" for p in parts]
        assert kinds == ["text", *["text", "image"] * 4, "text"]  # instruction, 2 x 2 demos, query
        for prompt, image in zip(parts[1:-1:2], parts[2:-1:2], strict=True):
            data = base64.b64decode(image["image_url"]["url"].split(",", 1)[1])
            word, count = (
                prompt["text"].removeprefix("Generate ").split()[1],
                prompt["text"].split()[1],
            )
            t, c = TASKS.index("fast_count_t2i"), CLASSES.index(word.removesuffix("s"))
            shot = ("two", "three", "four", "five", "six").index(count)
            assert pixel(data)[1:] == colour(t, 0, c, shot)[1:]  # its own class and shot
        assert parts[-1]["text"].startswith("Generate three ")
