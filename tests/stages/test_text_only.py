"""Text-only answerability against real chat-completions servers on 127.0.0.1."""

from __future__ import annotations

import io
import re

import pytest
from chat_server import ChatServer, Reply, Status, message_text
from PIL import Image

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.llm import LLMClient, LLMConfig
from benchsmith.hf.dataset_view import SampleView
from benchsmith.stages.base import count_reasons
from benchsmith.stages.text_only import (
    TEXT_ONLY_ANSWERABLE,
    TEXT_ONLY_LLM_ERROR,
    TextOnlySettings,
    check_text_only,
    text_only_messages,
)

# sample -> what each LLM replies ("!500" = a server error)
SCRIPT = {
    "leak": {"llm-a": "Paris", "llm-b": "paris"},
    "half": {"llm-a": "4", "llm-b": "five"},
    "safe": {"llm-a": "unanswerable", "llm-b": "I don't know"},
    "err": {"llm-a": "no idea", "llm-b": "!500"},
    "err-but-leaky": {"llm-a": "blue", "llm-b": "!500"},
}
GOLD = {"leak": "Paris", "half": "4", "safe": "B", "err": "7", "err-but-leaky": "blue"}


@pytest.fixture(autouse=True)
def _no_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


def png() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (6, 6), (1, 2, 3)).save(buffer, format="PNG")
    return buffer.getvalue()


def samples() -> list[SampleView]:
    out = []
    for sid, gold in GOLD.items():
        choices = ["cat", "dog"] if sid == "safe" else None
        out.append(SampleView(sid, f"Question <{sid}>?", gold, choices, "t", images=[png()]))
    return out


def sample_of(body: dict) -> str:
    return re.search(r"<([\w-]+)>", message_text(body)).group(1)


def scripted(body: dict):
    text = SCRIPT[sample_of(body)][body["model"]]
    return Status(500) if text == "!500" else Reply(text)


def is_correct(sample: SampleView, response: str) -> bool:
    return response.strip().lower() == str(sample.answer).lower()


def clients(server: ChatServer, cache) -> dict[str, LLMClient]:
    return {
        name: LLMClient(
            LLMConfig(model=name, base_url=server.base_url, cache_dir=cache, max_retries=0)
        )
        for name in ("llm-a", "llm-b")
    }


def test_decisions_evidence_and_no_image_sent(tmp_path):
    config = TextOnlySettings(models=("llm-a", "llm-b"))
    with ChatServer(reply=scripted) as server:
        llms = clients(server, tmp_path)
        decisions = check_text_only(samples(), llms, is_correct, config)
    assert len(server.requests) == 2 * len(GOLD)
    assert not any(r.has_image for r in server.requests)
    assert all(r.body["max_tokens"] == 128 for r in server.requests)
    assert {r.body["model"] for r in server.requests} == {"llm-a", "llm-b"}

    leak = decisions["leak"]
    assert (leak.action, leak.reason) == ("drop", TEXT_ONLY_ANSWERABLE)
    assert leak.evidence["correct_models"] == ["llm-a", "llm-b"]
    assert leak.evidence["responses"] == {"llm-a": "Paris", "llm-b": "paris"}
    sample = samples()[0]
    expected_key = llms["llm-b"].key_for(text_only_messages(sample), max_tokens=128)
    assert leak.evidence["cache_keys"]["llm-b"] == expected_key
    assert decisions["half"].action == "drop" and decisions["half"].evidence["correct_models"] == [
        "llm-a"
    ]
    safe = decisions["safe"]
    assert (safe.action, safe.reason) == ("keep", None)
    # a kept sample records what every model replied, and where the reply is cached
    assert safe.evidence["correct_models"] == []
    assert set(safe.evidence["responses"]) == set(safe.evidence["cache_keys"]) == {"llm-a", "llm-b"}
    assert all(safe.evidence["responses"].values()) and all(safe.evidence["cache_keys"].values())
    err = decisions["err"]
    assert (err.action, err.reason) == ("keep", TEXT_ONLY_LLM_ERROR)
    assert "HTTP 500" in err.evidence["errors"]["llm-b"]
    assert decisions["err-but-leaky"].reason == TEXT_ONLY_ANSWERABLE  # decidable despite error
    counts = count_reasons(decisions)
    assert counts[TEXT_ONLY_ANSWERABLE] == 3 and counts[TEXT_ONLY_LLM_ERROR] == 1


def test_threshold_allows_some_correct_llms(tmp_path):
    config = TextOnlySettings(models=("llm-a", "llm-b"), max_text_only_correct=1)
    with ChatServer(reply=scripted) as server:
        decisions = check_text_only(samples(), clients(server, tmp_path), is_correct, config)
    assert decisions["half"].action == "keep"  # one LLM correct is not more than 1
    assert decisions["leak"].action == "drop"  # two are
    assert decisions["err-but-leaky"].reason == TEXT_ONLY_LLM_ERROR  # undecided: keep, counted


def test_rerun_sends_only_the_failed_calls(tmp_path):
    config = TextOnlySettings(models=("llm-a", "llm-b"))
    with ChatServer(reply=scripted) as server:
        check_text_only(samples(), clients(server, tmp_path), is_correct, config)
    with ChatServer(reply=lambda body: Reply("7")) as healthy:
        decisions = check_text_only(samples(), clients(healthy, tmp_path), is_correct, config)
    sent = sorted((r.body["model"], sample_of(r.body)) for r in healthy.requests)
    assert sent == [("llm-b", "err"), ("llm-b", "err-but-leaky")]
    assert decisions["err"].reason == TEXT_ONLY_ANSWERABLE  # llm-b now says 7 == gold
    assert decisions["safe"].reason is None


def test_missing_client_or_no_models_is_a_clear_error(tmp_path):
    with ChatServer() as server:
        llms = clients(server, tmp_path)
        with pytest.raises(BenchsmithError, match="llm-c"):
            check_text_only(samples(), llms, is_correct, TextOnlySettings(models=("llm-c",)))
        with pytest.raises(BenchsmithError, match="no models"):
            check_text_only(samples(), llms, is_correct, TextOnlySettings(models=()))
    assert server.requests == []
