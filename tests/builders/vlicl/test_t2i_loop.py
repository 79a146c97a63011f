"""A text-to-image run end to end on the sample's ``open_t2i_mi``: ``predict`` asks a server on
127.0.0.1 for images, stores them by content beside the predictions, and ``score`` has a judge
on the same server look at each one for the query's real class name.

The generator copies the demonstration image shown after the query's own prompt ("Generate a
keswin", image of a keswin) and answers a grey square when there is none (zero-shot). The judge
knows which support image shows which class (read from the published support split, by
sha256) and says yes only when asked for that class. So a score of 0.0 at zero shots and 1.0 at
one shot checks, independently of the code under test, that demonstrations pair each prompt with
its own image, that rows land on their queries, and that the judge is asked for the class's
name, not the made-up word.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json

import pytest
from chat_server import ChatServer, ImageReply, Reply
from PIL import Image

from benchsmith.cli import main
from benchsmith.hf.reader import read_columns

GREY = io.BytesIO()
Image.new("RGB", (32, 32), (128, 128, 128)).save(GREY, format="PNG")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def parts_of(body: dict) -> list[tuple[str, str | bytes]]:
    content = body["messages"][-1]["content"]
    if isinstance(content, str):
        return [("text", content)]
    return [("text", p["text"]) if p["type"] == "text"
            else ("image", base64.b64decode(p["image_url"]["url"].split(",", 1)[1]))
            for p in content]  # fmt: skip


@pytest.fixture(scope="module")
def class_of_image(sample_project) -> dict[str, str]:
    table = read_columns(sample_project / "published" / "vlicl", "open_t2i_mi", "support",
                         ["images", "class_name"])  # fmt: skip
    return {sha(image["bytes"]): row_class
            for images, row_class in zip(table["images"].to_pylist(),
                                         table["class_name"].to_pylist(), strict=True)
            for image in images}  # fmt: skip


@pytest.fixture
def server(monkeypatch, class_of_image):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)

    def answer(body: dict):
        if body.get("model") == "judge":
            image = next(v for k, v in parts_of(body) if k == "image")
            text = next(v for k, v in parts_of(body) if k == "text")
            return Reply("yes" if f"show {class_of_image.get(sha(image))}?" in text else "no")
        if "prompt" in body:  # /images/generations
            return ImageReply(GREY.getvalue())
        parts = parts_of(body)
        query = parts[-1][1]
        for (kind, value), following in zip(parts, parts[1:], strict=False):
            if kind == "text" and value == query and following[0] == "image":
                return ImageReply(following[1])
        return ImageReply(GREY.getvalue())

    with ChatServer(answer) as chat:
        yield chat


def run(*argv: str) -> int:
    return main([str(a) for a in argv])


def test_predict_generates_stores_and_the_judge_scores(sample_project, server, tmp_path, capsys):
    published = sample_project / "published" / "vlicl"
    out = tmp_path / "runs" / "painter.jsonl"
    common = ["--model", "painter", "--base-url", server.base_url, "--llm-cache", tmp_path / "c"]
    assert run("predict", published, "--config", "open_t2i_mi", "--shots", "0", "1",
               "--seeds", "0", "--out", out, *common) == 0  # fmt: skip
    rows = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert len(rows) == 16 and {r["n_shot"] for r in rows} == {0, 1}
    for row in rows:
        image = (out.parent / row["response"]).read_bytes()
        assert row["response"].startswith("painter-images/") and sha(image) == row["image_sha256"]
    generation = [r for r in server.requests if r.body.get("model") == "painter"]
    assert all(r.body["modalities"] == ["image", "text"] for r in generation)
    one_shot = [r for r in generation if len(r.image_urls) == 2]  # a demo per class, 2-way
    assert len(one_shot) == 8 and all("Generate a " in r.text for r in one_shot)
    sent = len(server.requests)
    assert run("predict", published, "--config", "open_t2i_mi", "--shots", "0", "1",
               "--seeds", "0", "--out", out, *common) == 0  # fmt: skip
    assert len(server.requests) == sent  # every row done: nothing asked again

    capsys.readouterr()
    judge = ["--judge-model", "judge", "--judge-base-url", server.base_url,
             "--llm-cache", tmp_path / "c"]  # fmt: skip
    assert run("score", published, "--config", "open_t2i_mi", "--predictions", out, *judge) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["per_shot"]["0"]["accuracy"] == 0.0 and report["per_shot"]["1"]["accuracy"] == 1.0
    assert report["judge"]["model"] == "judge" and report["unparsed"] == 0
    asked = [r.text for r in server.requests if r.body.get("model") == "judge"]
    queries = read_columns(published, "open_t2i_mi", "query", ["class_name", "query_word"])
    assert {f"Does this image show {name}? Answer with one word: yes or no."
            for name in queries["class_name"].to_pylist()} <= set(asked)  # fmt: skip
    assert not any(word in text for word in queries["query_word"].to_pylist() for text in asked)


def test_images_endpoint_runs_zero_shot_and_refuses_demonstrations(sample_project, server,
                                                                   tmp_path, capsys):  # fmt: skip
    published = sample_project / "published" / "vlicl"
    out = tmp_path / "images.jsonl"
    common = ["--config", "open_t2i_mi", "--seeds", "0", "--model", "painter", "--base-url",
              server.base_url, "--llm-cache", tmp_path / "c", "--image-api", "images",
              "--out", out]  # fmt: skip
    assert run("predict", published, "--shots", "1", *common) == 2
    assert "takes a text prompt only" in capsys.readouterr().err and server.requests == []
    assert not out.exists()
    assert run("predict", published, "--shots", "0", *common) == 0
    assert {r.path for r in server.requests} == {"/v1/images/generations"}
    assert len(out.read_text().splitlines()) == 8


def test_commands_say_what_a_text_to_image_config_needs(sample_project, server, tmp_path, capsys):
    published = sample_project / "published" / "vlicl"
    out = tmp_path / "p.jsonl"
    out.write_text(json.dumps({"query_id": "open_t2i_mi/query/00000", "n_shot": 0, "seed": 0,
                               "response": "p-images/x.png"}) + "\n")  # fmt: skip
    assert run("score", published, "--config", "open_t2i_mi", "--predictions", out) == 2
    assert "pass --judge-model MODEL" in capsys.readouterr().err
    assert run("score", published, "--config", "clevr", "--predictions", out,
               "--judge-model", "j") == 2  # fmt: skip
    assert "apply to text-to-image configs" in capsys.readouterr().err
    assert run("predict", published, "--config", "clevr", "--model", "m", "--base-url",
               server.base_url, "--out", tmp_path / "q.jsonl", "--image-api", "chat") == 2  # fmt: skip
    assert "--image-api applies to text-to-image configs" in capsys.readouterr().err
    tsv = tmp_path / "tsv" / "vlicl.tsv"
    assert run("export", "vlmevalkit", published, "--out", tsv) == 0
    assert (
        "left out 4 config(s) (cobsat, fast_attr_t2i, fast_count_t2i, open_t2i_mi)"
        in capsys.readouterr().err
    )
