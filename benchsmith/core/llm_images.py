"""Images as a model's answer: what the one LLM client (:mod:`benchsmith.core.llm`) needs to ask
for a generated image and to read it out of the reply.

Why two routes: text-to-image benchmarks (VL-ICL's ``open_t2i_mi``, CoBSAT) give a model
demonstrations that are images *and* text, then ask for an image. OpenAI's images endpoint
(``POST /images/generations``) takes a text prompt only, so it can run zero-shot requests and no
more; an in-context request needs a chat-completions endpoint that answers with an image (the
``modalities: ["image", "text"]`` convention of OpenRouter, LiteLLM, Vercel's gateway and
Gemini's OpenAI layer, whose reply carries ``message.images[].image_url.url`` as a data URL).
Both are read here, and every image is decoded before it is accepted, so a truncated or junk
payload is a retried failure, never a stored answer.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
from typing import Any

IMAGE_APIS = ("chat", "images")  # chat completions answering with an image; /images/generations
MODALITIES = ["image", "text"]  # what a chat request asks for (sent as `modalities`)


class MalformedImageReply(Exception):
    """The reply is not what the endpoint promises (bad JSON, a payload that is not an image):
    worth retrying."""


class NoImageInReply(Exception):
    """The server answered, with text and no image: the model does not generate images (or
    refused); asking again the same way will not help."""


def image_params(api: str) -> dict[str, str]:
    """What marks a request as asking for an image, in its cache key: an image answer and a
    text answer to the same messages are different answers."""
    if api not in IMAGE_APIS:
        raise ValueError(f"unknown image API {api!r}; use one of {', '.join(IMAGE_APIS)}")
    return {"output": f"image:{api}"}


def prompt_of(messages: list[dict[str, Any]]) -> tuple[str, int]:
    """The text prompt the images endpoint takes (every text part, in order, one per line) and
    how many input images the messages hold (which that endpoint cannot take)."""
    texts: list[str] = []
    images = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
            continue
        for part in content or []:
            if part.get("type") == "text":
                texts.append(part.get("text", ""))
            else:
                images += 1
    return "\n".join(t for t in texts if t), images


def decode_data_url(url: str) -> bytes:
    """The bytes of a ``data:image/...;base64,`` URL (a remote URL is refused: the reply must
    carry the image, since fetching it would be a second, unrecorded request)."""
    if not url.startswith("data:"):
        raise NoImageInReply(f"the image is a link ({url[:60]}), not inline data")
    header, _, payload = url.partition(",")
    if ";base64" not in header:
        raise MalformedImageReply("the image data URL is not base64")
    return decode_base64(payload)


def decode_base64(payload: str) -> bytes:
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise MalformedImageReply(f"the image is not valid base64 ({exc})") from None


def checked_image(data: bytes) -> bytes:
    """``data`` if it decodes fully as an image (PIL loads every pixel), else malformed."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise MalformedImageReply(f"the returned image does not decode ({exc})") from None
    return data


def image_from_chat(body: str) -> tuple[bytes, str]:
    """(image bytes, text) of a chat completion that answered with an image: the first of
    ``message.images`` or, failing that, the first ``image_url`` part of ``message.content``."""
    message = _first_message(body)
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    candidates = list(message.get("images") or [])
    if isinstance(content, list):
        text = "\n".join(p.get("text", "") for p in content if p.get("type") == "text")
        candidates += [p for p in content if isinstance(p, dict) and "image_url" in p]
    for part in candidates:
        url = (part.get("image_url") or {}).get("url") if isinstance(part, dict) else None
        if isinstance(url, str):
            return checked_image(decode_data_url(url)), text
    raise NoImageInReply(f"the reply holds no image (text: {text[:80]!r})")


def image_from_generations(body: str) -> tuple[bytes, str]:
    """(image bytes, revised prompt) of an ``/images/generations`` reply asked for b64_json."""
    data = _json(body)
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list) or not items or not isinstance(items[0], dict):
        raise MalformedImageReply("no data in the body")
    payload = items[0].get("b64_json")
    if not isinstance(payload, str):
        if items[0].get("url"):
            raise NoImageInReply("the server answered with a link, not b64_json")
        raise MalformedImageReply("no b64_json in the first item")
    return checked_image(decode_base64(payload)), str(items[0].get("revised_prompt") or "")


def _json(body: str) -> Any:
    try:
        return json.loads(body)
    except ValueError as exc:
        raise MalformedImageReply(f"body is not JSON ({exc})") from None


def _first_message(body: str) -> dict[str, Any]:
    data = _json(body)
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise MalformedImageReply("no choices in the body")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise MalformedImageReply("no message in the first choice")
    return message
