"""Generated images through the one LLM client, against tests/chat_server.py on 127.0.0.1: both
routes (chat completions answering with an image, /images/generations), the cache, retries of
junk payloads, and the refusals that retrying cannot fix."""

from __future__ import annotations

import io

import pytest
from chat_server import ChatServer, ImageReply, Reply, Status
from PIL import Image

from benchsmith.core.llm import LLMClient, LLMConfig, image_part, text_part


@pytest.fixture(autouse=True)
def _clean_env(clean_llm_env):  # the shared fixture (conftest.py), for every test here
    pass


def client_for(server: ChatServer, tmp_path, **overrides) -> LLMClient:
    settings = dict(model="painter", base_url=server.base_url, cache_dir=tmp_path / "cache",
                    backoff_initial_s=0.01, backoff_max_s=0.05, timeout_s=5.0)  # fmt: skip
    return LLMClient(LLMConfig(**{**settings, **overrides}))


def png(color=(10, 200, 30), size=(12, 9)) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, format="PNG")
    return buffer.getvalue()


def in_context(word: str = "dax") -> list[dict]:
    """A one-shot request: a demonstration image between two text parts."""
    parts = [
        text_part(f"Generate a {word}"),
        image_part(png((1, 2, 3))),
        text_part("Generate a blick"),
    ]
    return [{"role": "user", "content": parts}]


@pytest.mark.parametrize("style", ["images", "content"])
def test_chat_route_returns_the_image_and_asks_for_image_output(server, tmp_path, style):
    image = png()
    server.script(ImageReply(image, text="here it is", style=style))
    [result] = client_for(server, tmp_path).generate_images([in_context()])
    assert result.ok and result.image == image and result.text == "here it is"
    [sent] = server.requests
    assert sent.path == "/v1/chat/completions"
    assert sent.body["modalities"] == ["image", "text"]
    assert len(sent.image_urls) == 1 and "Generate a blick" in sent.text


def test_images_route_sends_the_text_prompt_only(server, tmp_path):
    image = png((90, 90, 90))
    server.script(ImageReply(image))
    messages = [{"role": "user", "content": [text_part("Draw it."), text_part("Generate a dax")]}]
    [result] = client_for(server, tmp_path).generate_images([messages], api="images")
    assert result.ok and result.image == image
    [sent] = server.requests
    assert sent.path == "/v1/images/generations"
    assert sent.body["prompt"] == "Draw it.\nGenerate a dax"
    assert sent.body["response_format"] == "b64_json" and "temperature" not in sent.body


def test_images_route_refuses_input_images_without_sending(server, tmp_path):
    [result] = client_for(server, tmp_path).generate_images([in_context()], api="images")
    assert not result.ok and "text prompt only" in result.error and "1 input image" in result.error
    assert server.requests == []


def test_generated_images_are_cached_apart_from_text_answers(server, tmp_path):
    image = png((255, 0, 0))
    server.script(ImageReply(image), Reply("a dax is a red square"))
    client = client_for(server, tmp_path)
    [first] = client.generate_images([in_context()])
    [again] = client_for(server, tmp_path).generate_images([in_context()])  # a new client
    assert again.cached and again.image == image and again.key == first.key
    [text] = client.complete_many([in_context()])  # same messages, a text answer: another key
    assert text.text == "a dax is a red square" and text.key != first.key
    assert len(server.requests) == 2


@pytest.mark.parametrize("junk", [b"not an image at all", png()[:40]], ids=["junk", "truncated"])
def test_an_image_that_does_not_decode_is_retried(server, tmp_path, junk):
    image = png((0, 0, 255))
    server.script(ImageReply(junk), ImageReply(image))
    client = client_for(server, tmp_path)
    [result] = client.generate_images([in_context()])
    assert result.ok and result.image == image and result.attempts == 2
    assert client.stats.retries == 1


def test_a_text_only_reply_is_a_failure_not_retried_and_not_cached(server, tmp_path):
    server.script(Reply("I cannot draw."))
    client = client_for(server, tmp_path)
    [result] = client.generate_images([in_context()])
    assert not result.ok and "no image" in result.error and "I cannot draw." in result.error
    assert len(server.requests) == 1 and not list((tmp_path / "cache").rglob("*.json"))


def test_a_link_instead_of_data_is_refused(server, tmp_path):
    server.script(ImageReply(png(), style="url"))
    [result] = client_for(server, tmp_path).generate_images([[{"role": "user", "content": "x"}]],
                                                            api="images")  # fmt: skip
    assert not result.ok and "link" in result.error


def test_rate_limit_then_image(server, tmp_path):
    image = png((5, 5, 5))
    server.script(Status(429, retry_after=0), ImageReply(image))
    [result] = client_for(server, tmp_path).generate_images([in_context()])
    assert result.ok and result.image == image and result.attempts == 2


def test_unknown_image_api_is_an_error(server, tmp_path):
    with pytest.raises(ValueError, match="unknown image API"):
        client_for(server, tmp_path).generate_images([in_context()], api="dalle")
