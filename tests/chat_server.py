"""A local OpenAI-compatible chat-completions server for tests (127.0.0.1 only, never the network).

It serves ``POST /v1/chat/completions`` on an ephemeral port and answers each request with an
*action*: scripted in a queue (one action per request, in arrival order) or chosen by a callable
from the request body. Every request is recorded (parsed JSON body, headers, path), so tests can
assert exactly what a client sent: the model name, the prompt, whether an ``image_url`` part was
included, how many times a prompt was asked, and how many requests were in flight at once.

    from chat_server import ChatServer, Reply, Status, Sleep, Malformed, NoChoices

    with ChatServer() as server:
        server.script(Status(429, retry_after=0), Reply("YES"))   # 1st request 429, 2nd "YES"
        server.reply = lambda body: Reply("B")                    # used once the queue is empty
        client = LLMClient(LLMConfig(model="m", base_url=server.base_url, cache_dir=tmp))
        ...
        assert len(server.requests) == 2
        assert server.requests[0].body["model"] == "m"
        assert not server.requests[1].has_image           # no image_url part anywhere
        assert "What colour" in server.requests[1].text   # all text parts, joined by newlines
        assert server.max_in_flight <= 4

Actions (frozen dataclasses):

- ``Reply(text, finish_reason="stop", delay_s=0.0)``: 200 with a normal chat completion.
- ``Status(code, retry_after=None, body=None)``: that HTTP status with an OpenAI-style error
  JSON (or ``body`` verbatim); ``retry_after`` sets the ``Retry-After`` header (seconds).
- ``Sleep(seconds, then=Reply("late"))``: wait, then perform ``then``; with a client timeout
  shorter than ``seconds`` this is a timeout (the late write to a closed socket is ignored).
- ``Malformed(body='{"id": "x", "choices": [')``: 200, ``application/json``, a body that is not
  valid JSON.
- ``NoChoices()``: 200 with valid JSON that lacks ``choices``.
- ``ImageReply(image, text="", style="images")``: 200 with a generated image (PNG or JPEG
  bytes, or any bytes to test junk). On ``/v1/chat/completions`` the image is a data URL in
  ``message.images`` (``style="images"``, the OpenRouter/LiteLLM convention) or an
  ``image_url`` part of ``message.content`` (``style="content"``); on
  ``/v1/images/generations`` it is ``data[0].b64_json`` (``style="url"``: a link instead).
  Both paths are served; ``RecordedRequest.path`` tells which one a client used.

Choosing the action: the next queued action if the queue is not empty, else ``reply(body)`` if
a callable was given (constructor argument or ``server.reply``), else ``Status(500)`` with a
message saying the script ran out, so unexpected requests show up as errors in the test.

Recorded ``server.requests`` items are :class:`RecordedRequest` (``path``, ``headers`` as a
lower-cased dict, ``body`` as parsed JSON or ``None`` if unparsable, ``raw`` bytes, ``action``
served), with helpers ``.text`` (all text parts of all messages, joined by ``\\n``),
``.image_urls`` (every ``image_url.url`` sent) and ``.has_image``. ``server.texts()`` lists the
``.text`` of every request; ``server.count_containing(s)`` counts requests whose text has ``s``.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from local_server import LocalServer


@dataclass(frozen=True)
class Reply:
    text: str
    finish_reason: str = "stop"
    delay_s: float = 0.0


@dataclass(frozen=True)
class Status:
    code: int
    retry_after: float | None = None
    body: str | None = None


@dataclass(frozen=True)
class Sleep:
    seconds: float
    then: Any = field(default_factory=lambda: Reply("late"))


@dataclass(frozen=True)
class Malformed:
    body: str = '{"id": "chatcmpl-x", "choices": ['


@dataclass(frozen=True)
class NoChoices:
    pass


@dataclass(frozen=True)
class ImageReply:
    image: bytes
    text: str = ""
    style: str = "images"


Action = Reply | Status | Sleep | Malformed | NoChoices | ImageReply


def message_text(body: dict[str, Any] | None) -> str:
    """All text of all messages of a request body, joined by newlines."""
    texts: list[str] = []
    if isinstance((body or {}).get("prompt"), str):  # /images/generations takes a prompt
        texts.append(body["prompt"])
    for message in (body or {}).get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        elif isinstance(content, list):
            texts.extend(p.get("text", "") for p in content if p.get("type") == "text")
    return "\n".join(texts)


def image_urls(body: dict[str, Any] | None) -> list[str]:
    """Every ``image_url.url`` in the request's messages, in order."""
    urls: list[str] = []
    for message in (body or {}).get("messages") or []:
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if part.get("type") == "image_url" or "image_url" in part:
                    urls.append(str((part.get("image_url") or {}).get("url", "")))
    return urls


@dataclass
class RecordedRequest:
    path: str
    headers: dict[str, str]
    raw: bytes
    body: dict[str, Any] | None
    action: Any = None

    @property
    def text(self) -> str:
        return message_text(self.body)

    @property
    def image_urls(self) -> list[str]:
        return image_urls(self.body)

    @property
    def has_image(self) -> bool:
        return bool(self.image_urls) or b"image_url" in self.raw


class ChatServer(LocalServer):
    """Threaded chat-completions stub on an ephemeral 127.0.0.1 port; use as a context manager."""

    def __init__(self, reply: Callable[[dict[str, Any]], Action] | None = None):
        self.reply = reply
        self.requests: list[RecordedRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._queue: deque[Action] = deque()
        self._lock = threading.Lock()
        self._counter = 0
        self._listen(_handler_for(self))

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def script(self, *actions: Action) -> None:
        """Queue actions, one per future request, before falling back to ``reply``."""
        with self._lock:
            self._queue.extend(actions)

    def texts(self) -> list[str]:
        return [r.text for r in self.requests]

    def count_containing(self, needle: str) -> int:
        return sum(needle in r.text for r in self.requests)

    # -- used by the handler -------------------------------------------------------------------
    def _next_action(self, body: dict[str, Any] | None) -> tuple[Action, int]:
        with self._lock:
            self._counter += 1
            if self._queue:
                return self._queue.popleft(), self._counter
        if self.reply is not None:
            return self.reply(body or {}), self._counter
        return Status(500, body='{"error": {"message": "chat_server: script ran out"}}'), (
            self._counter
        )


def _completion(text: str, finish_reason: str, model: str, number: int) -> dict[str, Any]:
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": 1700000000 + number,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _handler_for(server: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
            pass

        def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            # Leave the in-flight count before answering: the client may send its next request
            # as soon as it reads this one, and that must not count as concurrent.
            self._leave()
            try:
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)
                self.wfile.flush()
            except OSError:  # the client gave up (timeout) and closed the socket
                self.close_connection = True

        def _perform(self, action: Action, model: str, number: int) -> None:
            if isinstance(action, Sleep):
                time.sleep(action.seconds)
                self._perform(action.then, model, number)
            elif isinstance(action, Reply):
                if action.delay_s:
                    time.sleep(action.delay_s)
                payload = _completion(action.text, action.finish_reason, model, number)
                self._send(200, json.dumps(payload).encode())
            elif isinstance(action, Status):
                body = action.body
                if body is None:
                    body = json.dumps(
                        {"error": {"message": f"scripted {action.code}", "type": "test"}}
                    )
                headers = {}
                if action.retry_after is not None:
                    headers["Retry-After"] = f"{action.retry_after:g}"
                self._send(action.code, body.encode(), headers)
            elif isinstance(action, Malformed):
                self._send(200, action.body.encode())
            elif isinstance(action, ImageReply):
                self._perform_image(action, model, number)
            elif isinstance(action, NoChoices):
                self._send(200, json.dumps({"id": f"chatcmpl-{number}", "object": "x"}).encode())
            else:
                raise TypeError(f"unknown chat_server action {action!r}")

        def _perform_image(self, action: ImageReply, model: str, number: int) -> None:
            data = base64.b64encode(action.image).decode("ascii")
            if self.path.rstrip("/").endswith("/images/generations"):
                item = ({"url": "http://127.0.0.1:9/image.png"} if action.style == "url"
                        else {"b64_json": data, "revised_prompt": action.text})  # fmt: skip
                payload: dict[str, Any] = {"created": 1700000000 + number, "data": [item]}
            else:
                payload = _completion(action.text, "stop", model, number)
                part = {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}}
                message = payload["choices"][0]["message"]
                if action.style == "content":
                    message["content"] = [{"type": "text", "text": action.text}, part]
                else:
                    message["images"] = [part]
            self._send(200, json.dumps(payload).encode())

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
            self._counted = True
            with server._lock:
                server.in_flight += 1
                server.max_in_flight = max(server.max_in_flight, server.in_flight)
            try:
                if self.path.rstrip("/") not in ("/v1/chat/completions", "/v1/images/generations"):
                    action: Action = Status(404)
                    number = 0
                else:
                    action, number = server._next_action(body)
                record = RecordedRequest(
                    path=self.path,
                    headers={k.lower(): v for k, v in self.headers.items()},
                    raw=raw,
                    body=body,
                    action=action,
                )
                with server._lock:
                    server.requests.append(record)
                model = str((body or {}).get("model", ""))
                self._perform(action, model, number)
            finally:
                self._leave()

        def _leave(self) -> None:
            if getattr(self, "_counted", False):
                self._counted = False
                with server._lock:
                    server.in_flight -= 1

    return Handler
