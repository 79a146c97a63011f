"""One HTTP attempt of the LLM client (:mod:`benchsmith.core.llm`), and how its reply is read.

Why apart from the client: the client owns caching, retries and concurrency, the same for every
kind of request; what differs per kind (a text answer from chat completions, an image from chat
completions, an image from ``/images/generations``) is only how the request is sent and its body
read, and that is all this module does. An attempt never raises: it returns an :class:`Answer`
or a :class:`Failure` that says whether retrying can help.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import openai

from benchsmith.core.llm_images import (
    MODALITIES,
    MalformedImageReply,
    NoImageInReply,
    image_from_chat,
    image_from_generations,
    prompt_of,
)


@dataclass
class Failure:
    error: str
    retryable: bool
    retry_after: float | None = None


@dataclass
class Answer:
    text: str
    finish_reason: str | None
    extra: dict[str, Any] = field(default_factory=dict)
    image: bytes | None = None  # a generated image (requests whose params ask for one)


class MalformedResponse(Exception):
    pass


def parse_completion(body: str) -> Answer:
    try:
        data = json.loads(body)
    except ValueError as exc:
        raise MalformedResponse(f"body is not JSON ({exc})") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedResponse("no choices in the body")
    message = choices[0].get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        reason = choices[0].get("finish_reason")
        raise MalformedResponse(f"no message text (finish_reason={reason})")
    extra = {"served_model": data.get("model"), "created": data.get("created")}
    return Answer(content, choices[0].get("finish_reason"), extra)


def retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after") if exc.response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff


def attempt(
    client: openai.OpenAI,
    model: str,
    messages: list[dict[str, Any]],
    params: dict[str, Any],
    *,
    timeout_s: float,
    base_url: str,
) -> Answer | Failure:
    """Send one request as its ``params`` say (``output``: absent for text, ``image:chat`` or
    ``image:images``) and read the reply; every way it can fail becomes a :class:`Failure`."""
    output = params.get("output")
    sampling = {k: v for k, v in params.items() if v is not None and k != "output"}
    try:
        if output is None:
            raw = client.chat.completions.with_raw_response.create(
                model=model, messages=messages, **sampling
            )
            return parse_completion(raw.text)
        if output == "image:chat":
            raw = client.chat.completions.with_raw_response.create(
                model=model, messages=messages, extra_body={"modalities": MODALITIES}, **sampling
            )
            image, text = image_from_chat(raw.text)
            return Answer(text, "stop", {"served_model": model}, image)
        prompt, images = prompt_of(messages)
        if images:
            return Failure(f"the images endpoint takes a text prompt only, and this request "
                           f"holds {images} input image(s)", False)  # fmt: skip
        raw = client.images.with_raw_response.generate(
            model=model, prompt=prompt, n=1, response_format="b64_json"
        )
        image, text = image_from_generations(raw.text)
        return Answer(text, "stop", {"served_model": model}, image)
    except (MalformedResponse, MalformedImageReply) as exc:
        return Failure(f"malformed response: {exc}", True)
    except NoImageInReply as exc:
        return Failure(f"no image: {exc}", False)
    except openai.APITimeoutError:
        return Failure(f"timeout after {timeout_s:g} s", True)
    except openai.APIConnectionError as exc:
        return Failure(f"connection error: {exc} ({base_url})", True)
    except openai.APIStatusError as exc:
        status = exc.status_code
        retryable = status == 429 or status >= 500
        message = str(exc.message)[:300]
        return Failure(f"HTTP {status}: {message}", retryable, retry_after(exc))
    except openai.OpenAIError as exc:
        return Failure(f"client error: {str(exc)[:300]}", False)
