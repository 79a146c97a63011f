"""The LLM client against a real chat-completions server on 127.0.0.1 (tests/chat_server.py)."""

from __future__ import annotations

import base64
import io
import json
import logging
import time
from pathlib import Path

import pytest
from chat_server import ChatServer, Malformed, NoChoices, Reply, Sleep, Status
from PIL import Image

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.llm import (
    LLMClient,
    LLMConfig,
    LLMUnavailable,
    image_part,
    provenance_record,
    request_key,
    require_ok,
    user_message,
)


@pytest.fixture(autouse=True)
def _clean_env(clean_llm_env):  # the shared fixture (conftest.py), for every test here
    pass


def make_client(server: ChatServer, tmp_path: Path, **overrides) -> LLMClient:
    settings = dict(
        model="judge-1",
        base_url=server.base_url,
        cache_dir=tmp_path / "cache",
        backoff_initial_s=0.01,
        backoff_max_s=0.05,
        timeout_s=5.0,
    )
    settings.update(overrides)
    return LLMClient(LLMConfig(**settings))


def ask(text: str) -> list[dict]:
    return [user_message(text)]


def png_bytes(color=(200, 10, 10)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 6), color).save(buffer, format="PNG")
    return buffer.getvalue()


def jpeg_bytes() -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (8, 6), (0, 90, 200)).save(buffer, format="JPEG")
    return buffer.getvalue()


def test_scripted_replies_and_what_was_sent(server, tmp_path):
    server.script(Reply("Paris"), Reply("4"))
    client = make_client(server, tmp_path, temperature=0.0)
    first = client.complete(ask("Capital of France?"), max_tokens=16)
    second = client.complete(ask("2+2?"))
    assert (first.text, second.text) == ("Paris", "4")
    assert first.ok and not first.cached and first.attempts == 1 and first.model == "judge-1"
    body = server.requests[0].body
    assert body["model"] == "judge-1"
    assert body["temperature"] == 0.0 and body["max_tokens"] == 16
    assert body["messages"] == [{"role": "user", "content": "Capital of France?"}]
    assert "max_tokens" not in server.requests[1].body  # None is not sent
    assert client.stats.requests == 2 and client.stats.errors == 0


def test_cache_hit_sends_nothing_even_from_a_new_client(server, tmp_path):
    server.reply = lambda body: Reply("answer to " + body["messages"][0]["content"])
    client = make_client(server, tmp_path)
    first = client.complete(ask("q1"))
    again = client.complete(ask("q1"))
    rerun = make_client(server, tmp_path).complete(ask("q1"))
    assert len(server.requests) == 1
    assert again.cached and rerun.cached and again.attempts == 0
    assert again.text == rerun.text == first.text == "answer to q1"
    assert again.key == first.key
    assert client.stats.cache_hits == 1
    cache_file = tmp_path / "cache" / first.key[:2] / f"{first.key}.json"
    entry = json.loads(cache_file.read_text())
    assert entry["key"] == first.key and entry["model"] == "judge-1"
    assert entry["text"] == "answer to q1" and entry["finish_reason"] == "stop"


def test_different_params_are_different_requests(server, tmp_path):
    server.reply = lambda body: Reply("x")
    client = make_client(server, tmp_path)
    client.complete(ask("q"), max_tokens=8)
    client.complete(ask("q"), max_tokens=9)
    assert len(server.requests) == 2
    base = request_key("m", ask("q"), {"temperature": 0.0, "max_tokens": None})
    assert base != request_key("m2", ask("q"), {"temperature": 0.0, "max_tokens": None})
    assert base != request_key("m", ask("q2"), {"temperature": 0.0, "max_tokens": None})
    assert base != request_key("m", ask("q"), {"temperature": 0.7, "max_tokens": None})
    assert base == request_key("m", ask("q"), {"max_tokens": None, "temperature": 0.0})


def test_429_then_success_honours_retry_after(server, tmp_path):
    server.script(Status(429, retry_after=0.3), Reply("ok"))
    client = make_client(server, tmp_path, backoff_initial_s=5.0, backoff_max_s=10.0)
    started = time.monotonic()
    result = client.complete(ask("q"))
    elapsed = time.monotonic() - started
    assert result.text == "ok" and result.attempts == 2
    assert 0.3 <= elapsed < 4.0  # waited the server's 0.3 s, not our 2.5-5 s backoff
    assert client.stats.retries == 1 and client.stats.errors == 0


@pytest.mark.parametrize("status", [500, 503])
def test_server_error_then_success(server, tmp_path, status):
    server.script(Status(status), Reply("ok"))
    result = make_client(server, tmp_path).complete(ask("q"))
    assert result.ok and result.text == "ok" and result.attempts == 2
    assert len(server.requests) == 2


def test_timeout_then_success(server, tmp_path):
    server.script(Sleep(1.5), Reply("fast"))
    client = make_client(server, tmp_path, timeout_s=0.3)
    result = client.complete(ask("q"))
    assert result.text == "fast" and result.attempts == 2
    assert client.stats.retries == 1


def test_permanent_failure_is_an_error_result_and_not_cached(server, tmp_path):
    server.reply = lambda body: Status(500)
    client = make_client(server, tmp_path, max_retries=2)
    result = client.complete(ask("q"))
    assert not result.ok and result.text is None and "HTTP 500" in result.error
    assert result.attempts == 3 and len(server.requests) == 3
    assert client.stats.errors == 1 and client.stats.retries == 2
    assert not list((tmp_path / "cache").rglob("*.json"))
    server.reply = lambda body: Reply("back")
    assert client.complete(ask("q")).text == "back"  # failures are retried on the next run
    with pytest.raises(LLMUnavailable, match="1 of 1"):
        require_ok([result])
    require_ok([client.complete(ask("q"))])


def test_client_errors_other_than_429_are_not_retried(server, tmp_path):
    server.reply = lambda body: Status(404, body='{"error": {"message": "model not found"}}')
    result = make_client(server, tmp_path).complete(ask("q"))
    assert result.attempts == 1 and len(server.requests) == 1
    assert "HTTP 404" in result.error and "model not found" in result.error


@pytest.mark.parametrize("junk", [Malformed(), Malformed("<html>oops</html>"), NoChoices()])
def test_malformed_responses_are_counted_errors(server, tmp_path, junk):
    server.reply = lambda body: junk
    client = make_client(server, tmp_path, max_retries=1)
    result = client.complete(ask("q"))
    assert result.error.startswith("malformed response")
    assert result.attempts == 2 and client.stats.errors == 1


def test_malformed_then_success(server, tmp_path):
    server.script(Malformed(), Reply("fine"))
    assert make_client(server, tmp_path).complete(ask("q")).text == "fine"


def test_concurrency_bound_and_input_order(server, tmp_path):
    server.reply = lambda body: Reply("echo " + body["messages"][0]["content"], delay_s=0.15)
    client = make_client(server, tmp_path, max_concurrency=3)
    requests = [ask(f"q{i}") for i in range(12)]
    results = client.complete_many(requests)
    assert [r.text for r in results] == [f"echo q{i}" for i in range(12)]
    assert server.max_in_flight == 3  # bounded, and the bound is actually used


def test_complete_many_serves_cache_first_and_sends_duplicates_once(server, tmp_path):
    server.reply = lambda body: Reply("echo " + body["messages"][0]["content"])
    client = make_client(server, tmp_path)
    client.complete(ask("a"))
    results = client.complete_many([ask("a"), ask("b"), ask("b"), ask("c")])
    assert [r.text for r in results] == ["echo a", "echo b", "echo b", "echo c"]
    assert [r.cached for r in results] == [True, False, True, False]
    assert sorted(server.texts()) == ["a", "b", "c"]


def test_api_key_never_leaks(server, tmp_path, monkeypatch, caplog, capsys):
    secret = "sk-SECRET-MARKER-7f3a9c"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    caplog.set_level(logging.DEBUG)
    server.script(
        Reply("fine"),
        Status(401, body=json.dumps({"error": {"message": f"bad key {secret}"}})),
        Status(500),
        Malformed(),
    )
    client = make_client(server, tmp_path, max_retries=1)
    results = [client.complete(ask("a")), client.complete(ask("b")), client.complete(ask("c"))]
    assert server.requests[0].headers["authorization"] == f"Bearer {secret}"  # the key is used
    exposed = [
        caplog.text,
        *capsys.readouterr(),
        repr(client),
        repr(client.config),
        repr(results),
        json.dumps([provenance_record(r) for r in results]),
        json.dumps(client.stats.as_dict()),
        *(p.read_text() for p in (tmp_path / "cache").rglob("*") if p.is_file()),
    ]
    assert results[1].error and "***" in results[1].error
    assert not any(secret in text for text in exposed)


def test_a_key_echoed_in_a_successful_reply_is_never_written(server, tmp_path, monkeypatch):
    secret = "sk-ECHOED-KEY-51c2"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    server.reply = lambda body: Reply(f"your key is {secret}, answer: 4")
    client = make_client(server, tmp_path)
    first = client.complete(ask("a"))
    again = make_client(server, tmp_path).complete(ask("a"))
    assert first.text == again.text == "your key is ***, answer: 4" and again.cached
    cache_files = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert cache_files and not any(secret.encode() in p.read_bytes() for p in cache_files)


def test_a_short_key_never_rewrites_what_the_model_answered(server, tmp_path, monkeypatch):
    """With OPENAI_API_KEY=B, a model answering "B" is an answer, not a leak: the reply, its
    cache entry and a cached rerun keep it; an error message is still redacted."""
    monkeypatch.setenv("OPENAI_API_KEY", "B")
    server.script(Reply("B"), Status(401, body=json.dumps({"error": {"message": "key B"}})))
    client = make_client(server, tmp_path, max_retries=0)
    answered, failed = client.complete(ask("which?")), client.complete(ask("other"))
    assert answered.text == "B"
    again = make_client(server, tmp_path).complete(ask("which?"))
    assert again.cached and again.text == "B"
    cached = [json.loads(p.read_text()) for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert [c["text"] for c in cached] == ["B"]
    assert failed.error and "key ***" in failed.error


def test_missing_key_uses_placeholder(server, tmp_path):
    server.script(Reply("ok"))
    assert make_client(server, tmp_path).complete(ask("q")).ok
    assert server.requests[0].headers["authorization"] == "Bearer not-needed"


def test_cache_key_does_not_depend_on_base_url(tmp_path):
    with ChatServer(reply=lambda b: Reply("from A")) as a, ChatServer() as b:
        first = make_client(a, tmp_path).complete(ask("q"))
        moved = make_client(b, tmp_path).complete(ask("q"))
    assert moved.cached and moved.text == "from A" and moved.key == first.key
    assert b.requests == []


def test_base_url_from_environment_or_clear_error(server, tmp_path, monkeypatch):
    with pytest.raises(BenchsmithError, match="OPENAI_BASE_URL"):
        LLMClient(LLMConfig(model="m", cache_dir=None))
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    server.script(Reply("via env"))
    assert LLMClient(LLMConfig(model="m", cache_dir=None)).complete(ask("q")).text == "via env"


def test_server_down_gives_connection_errors(tmp_path):
    with ChatServer() as gone:
        url = gone.base_url
    client = LLMClient(
        LLMConfig(
            model="m", base_url=url, cache_dir=tmp_path, max_retries=1, backoff_initial_s=0.01
        )
    )
    result = client.complete(ask("q"))
    assert result.error.startswith("connection error") and result.attempts == 2


def test_corrupt_cache_file_is_a_miss_and_is_overwritten(server, tmp_path, capsys):
    server.reply = lambda body: Reply("fresh")
    client = make_client(server, tmp_path)
    key = client.key_for(ask("q"))
    path = tmp_path / "cache" / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"key": "truncat')
    result = client.complete(ask("q"))
    assert result.text == "fresh" and not result.cached and len(server.requests) == 1
    assert "unreadable" in capsys.readouterr().err
    assert json.loads(path.read_text())["text"] == "fresh"
    assert client.complete(ask("q")).cached


def test_image_parts_are_data_urls_with_the_right_mime(server, tmp_path):
    png, jpeg = png_bytes(), jpeg_bytes()
    part = image_part(png, detail="low")
    assert part["image_url"]["detail"] == "low"
    prefix, payload = part["image_url"]["url"].split(",", 1)
    assert prefix == "data:image/png;base64" and base64.b64decode(payload) == png
    server.script(Reply("a red square"))
    make_client(server, tmp_path).complete([user_message("describe", [jpeg, png], detail="high")])
    sent = server.requests[0]
    assert [u.split(",")[0] for u in sent.image_urls] == [
        "data:image/jpeg;base64",
        "data:image/png;base64",
    ]
    assert base64.b64decode(sent.image_urls[0].split(",", 1)[1]) == jpeg
    content = sent.body["messages"][0]["content"]
    assert content[-1] == {"type": "text", "text": "describe"}
    assert content[0]["image_url"]["detail"] == "high"
    with pytest.raises(BenchsmithError, match="not PNG"):
        image_part(b"%PDF-1.7 not an image")
    with pytest.raises(BenchsmithError, match="detail"):
        image_part(png, detail="ultra")
