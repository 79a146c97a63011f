"""OpenAI chat-completions messages: text and inline images in one user turn.

Images travel inline as base64 data URLs (no file server, nothing to expire), with the MIME type
read from the bytes themselves. The message dicts are also what the LLM cache key hashes
(:func:`benchsmith.core.llm_cache.request_key`), so they must be built the same way every time.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from benchsmith.core.errors import BenchsmithError

IMAGE_DETAILS = ("low", "high", "auto")

_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
)


def image_mime(image_bytes: bytes) -> str:
    """MIME type from the magic bytes (the file name, if any, is not trusted)."""
    for magic, mime in _IMAGE_MAGIC:
        if image_bytes.startswith(magic):
            return mime
    if image_bytes[:4] == b"RIFF" and image_bytes[8:12] == b"WEBP":
        return "image/webp"
    raise BenchsmithError(
        f"image is not PNG, JPEG, GIF, WEBP or BMP (starts with {image_bytes[:8]!r})",
        fix="re-encode the dataset's images as PNG or JPEG",
    )


def text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def image_part(image_bytes: bytes, detail: str = "auto") -> dict[str, Any]:
    """An ``image_url`` part carrying the image inline as a base64 data URL."""
    if detail not in IMAGE_DETAILS:
        raise BenchsmithError(f"image detail {detail!r} is not one of {IMAGE_DETAILS}")
    encoded = base64.b64encode(image_bytes).decode("ascii")
    url = f"data:{image_mime(image_bytes)};base64,{encoded}"
    return {"type": "image_url", "image_url": {"url": url, "detail": detail}}


def user_message(text: str, images: Sequence[bytes] = (), detail: str = "auto") -> dict[str, Any]:
    """One user turn: images first, then the text (the LLaVA/lmms-eval order).

    Without images the content is a plain string, which text-only servers accept everywhere.
    """
    if not images:
        return {"role": "user", "content": text}
    return {"role": "user", "content": [*(image_part(i, detail) for i in images), text_part(text)]}
