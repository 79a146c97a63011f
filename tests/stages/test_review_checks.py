"""Zero-pass review: LLM YES/NO check with the image (real 127.0.0.1 server) and human verdicts."""

from __future__ import annotations

import base64
import io
import json
import re

import pytest
from chat_server import ChatServer, Malformed, Reply, Status, message_text
from PIL import Image

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.llm import LLMClient, LLMConfig
from benchsmith.hf.dataset_view import SampleView
from benchsmith.stages.base import StageDecision, count_reasons
from benchsmith.stages.review_checks import (
    ZERO_PASS_HUMAN_REJECT,
    ZERO_PASS_LLM_ERROR,
    ZERO_PASS_LLM_REJECT,
    ZERO_PASS_PARSE_FAIL,
    ReviewConfig,
    apply_human_verdicts,
    parse_verdict,
    read_human_verdicts,
    review_zero_pass,
)


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("The chart shows 42.\nJudgement: YES", "YES"),
        ("**Judgement:** **no**.", "NO"),
        ("judgment: Yes!", "YES"),
        ("### Judgement: NO", "NO"),
        ("<Your judgement>: [YES]", "YES"),
        ("Judgement：yes", "YES"),
        ("Judgement: YES\nOn reflection the label is wrong.\nJudgement: NO", "NO"),
        ("No.", "NO"),
        ("Judgement: YES|NO", None),
        ("Judgement: YES, but the image is blurry", None),
        ("Judgement: maybe", None),
        ("I think the answer is yes", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_verdict(reply, verdict):
    assert parse_verdict(reply) == verdict


def png(color) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (16, 12), color).save(buffer, format="PNG")
    return buffer.getvalue()


SAMPLES = [
    SampleView("yes", "What animal? [yes]", ["cat", "kitty"], None, "t", images=[png((1, 1, 1))]),
    SampleView("no", "Which shape? [no]", "1", ["circle", "square"], "t", images=[png((9, 9, 9))]),
    SampleView("junk", "Colour? [junk]", "red", None, "t", images=[png((5, 5, 5))]),
    SampleView("down", "Count? [down]", 3, None, "t", images=[png((7, 7, 7))]),
]
REPLIES = {
    "yes": Reply("The image shows a cat.\nJudgement: YES"),
    "no": Reply("Judgement: NO"),
    "junk": Reply("Looks plausible to me."),
    "down": Status(503),
}


def tag(body: dict) -> str:
    return re.search(r"\[(\w+)\]", message_text(body)).group(1)


def make_client(server: ChatServer, cache, model="reviewer") -> LLMClient:
    config = LLMConfig(model=model, base_url=server.base_url, cache_dir=cache, max_retries=0)
    return LLMClient(config)


def test_review_decisions_prompt_and_image(tmp_path):
    with ChatServer(reply=lambda body: REPLIES[tag(body)]) as server:
        decisions = review_zero_pass(
            SAMPLES, make_client(server, tmp_path), ReviewConfig(model="reviewer")
        )
    assert {k: (d.action, d.reason) for k, d in decisions.items()} == {
        "yes": ("keep", None),
        "no": ("drop", ZERO_PASS_LLM_REJECT),
        "junk": ("drop", ZERO_PASS_PARSE_FAIL),
        "down": ("keep", ZERO_PASS_LLM_ERROR),  # no verdict: undecided, never dropped for it
    }
    assert count_reasons(decisions)[ZERO_PASS_PARSE_FAIL] == 1
    sent = {tag(r.body): r for r in server.requests}
    first = sent["yes"]
    assert "What animal? [yes]" in first.text and "cat; kitty" in first.text
    assert "Judgement: YES" in first.text and "Judgement: NO" in first.text
    assert "B. square" in sent["no"].text  # an index answer is shown as its option
    part = first.body["messages"][0]["content"][0]
    assert part["image_url"]["detail"] == "high"  # our default, not the original's "low"
    assert base64.b64decode(part["image_url"]["url"].split(",", 1)[1]) == SAMPLES[0].images[0]
    assert first.body["max_tokens"] == 1000
    assert decisions["no"].evidence["cache_key"] and decisions["no"].evidence["model"] == "reviewer"
    assert decisions["junk"].evidence["response"] == "Looks plausible to me."
    assert "HTTP 503" in decisions["down"].evidence["error"]


def test_rerun_asks_only_what_failed(tmp_path):
    with ChatServer(reply=lambda body: REPLIES[tag(body)]) as server:
        review_zero_pass(SAMPLES, make_client(server, tmp_path), ReviewConfig(model="reviewer"))
    with ChatServer(reply=lambda body: Reply("Judgement: YES")) as healthy:
        decisions = review_zero_pass(
            SAMPLES, make_client(healthy, tmp_path), ReviewConfig(model="reviewer", detail="low")
        )
    # detail is part of the request, so every request changed and is asked again...
    assert len(healthy.requests) == len(SAMPLES)
    with ChatServer(reply=lambda body: Reply("Judgement: NO")) as third:
        again = review_zero_pass(
            SAMPLES, make_client(third, tmp_path), ReviewConfig(model="reviewer", detail="low")
        )
    # ...but with the same settings nothing is asked twice
    assert third.requests == []
    assert {k: d.action for k, d in again.items()} == {k: d.action for k, d in decisions.items()}


def test_failed_review_is_retried_on_rerun(tmp_path):
    with ChatServer(reply=lambda body: Malformed()) as broken:
        first = review_zero_pass(
            SAMPLES[:1], make_client(broken, tmp_path), ReviewConfig(model="reviewer")
        )
    assert first["yes"].reason == ZERO_PASS_LLM_ERROR
    assert "malformed" in first["yes"].evidence["error"]
    with ChatServer(reply=lambda body: Reply("Judgement: YES")) as healthy:
        second = review_zero_pass(
            SAMPLES[:1], make_client(healthy, tmp_path), ReviewConfig(model="reviewer")
        )
    assert len(healthy.requests) == 1 and second["yes"].action == "keep"


def test_model_mismatch_is_an_error(tmp_path):
    with ChatServer() as server, pytest.raises(BenchsmithError, match="gpt-x"):
        review_zero_pass(SAMPLES, make_client(server, tmp_path), ReviewConfig(model="gpt-x"))


def write_jsonl(path, rows) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_human_verdicts_from_jsonl_and_csv(tmp_path):
    folder = tmp_path / "annotations"
    folder.mkdir()
    write_jsonl(
        folder / "a.jsonl",
        [
            {"sample_id": "no", "verdict": "accept", "reviewer": "ann", "note": "label ok"},
            {"sample_id": 7, "verdict": "Reject", "reviewer": "ann"},
        ],
    )
    (folder / "b.csv").write_text("sample_id,verdict,reviewer,note\nyes,reject,bob,wrong key\n\n")
    (folder / "README.md").write_text("not read")
    verdicts = read_human_verdicts(folder)
    assert sorted(verdicts) == ["7", "no", "yes"]
    assert verdicts["7"].verdict == "reject" and verdicts["no"].note == "label ok"
    assert verdicts["yes"].source == f"{folder / 'b.csv'}:2"
    assert read_human_verdicts(folder / "b.csv").keys() == {"yes"}


@pytest.mark.parametrize(
    ("name", "text", "where", "message"),
    [
        ("v.jsonl", '{"sample_id": "a", "verdict": "accept"}\n{"sample_id": "b",\n', 2, "JSON"),
        ("v.jsonl", '{"sample_id": "a", "verdict": "maybe"}\n', 1, "unknown verdict"),
        ("v.jsonl", '{"verdict": "accept"}\n', 1, "no sample_id"),
        ("v.jsonl", '["a", "accept"]\n', 1, "not an object"),
        ("v.csv", "sample_id,verdict\na,accept\nb,perhaps\n", 3, "unknown verdict"),
        ("v.csv", "id,verdict\na,accept\n", 1, "header"),
        (
            "v.jsonl",
            '{"sample_id": "a", "verdict": "accept"}\n' * 2
            + '{"sample_id": "a", "verdict": "reject"}\n',
            3,
            "both accepted",
        ),
    ],
)
def test_malformed_verdict_files_name_file_and_line(tmp_path, name, text, where, message):
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(BenchsmithError, match=message) as error:
        read_human_verdicts(path)
    assert f"{path}:{where}" in str(error.value)


def test_missing_verdict_path_is_a_clear_error(tmp_path):
    with pytest.raises(BenchsmithError, match="not found"):
        read_human_verdicts(tmp_path / "nope")


def test_human_verdicts_override_the_llm(tmp_path):
    llm = {
        "kept": StageDecision("kept", "keep", None, {"verdict": "YES"}),
        "rejected": StageDecision("rejected", "drop", ZERO_PASS_LLM_REJECT, {"verdict": "NO"}),
        "untouched": StageDecision("untouched", "drop", ZERO_PASS_PARSE_FAIL, {}),
    }
    path = tmp_path / "verdicts.jsonl"
    write_jsonl(
        path,
        [
            {"sample_id": "kept", "verdict": "reject", "reviewer": "ann", "note": "wrong"},
            {"sample_id": "rejected", "verdict": "accept", "reviewer": "bob", "note": "fine"},
            {"sample_id": "human-only", "verdict": "accept", "reviewer": "bob"},
        ],
    )
    final = apply_human_verdicts(llm, read_human_verdicts(path))
    assert (final["kept"].action, final["kept"].reason) == ("drop", ZERO_PASS_HUMAN_REJECT)
    assert final["kept"].evidence["human"]["reviewer"] == "ann"
    assert final["kept"].evidence["llm"]["verdict"] == "YES"
    assert (final["rejected"].action, final["rejected"].reason) == ("keep", None)
    assert final["rejected"].evidence["overrides_llm"] is True
    assert final["rejected"].evidence["human"]["source"] == f"{path}:2"
    assert final["untouched"] == llm["untouched"]
    assert final["human-only"].action == "keep" and final["human-only"].evidence["llm"] is None
    assert llm["kept"].action == "keep"  # the input is not modified
