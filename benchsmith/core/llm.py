"""The one LLM client (ARCHITECTURE.md contract 5): any OpenAI-compatible chat-completions server.

Why it looks like this:

- **Content-addressed cache.** Every successful answer is stored under the sha256 of exactly what
  determines it (model, messages, temperature, max_tokens; see :func:`request_key`), so the same
  request is never sent twice. The cache is what makes curation reruns reproducible and cheap,
  and what lets an interrupted or partly failed run resume: only requests without a cached answer
  are sent again. The server address and the API key are *not* part of the key, so moving to
  another host serving the same model reuses the answers.
- **Errors are values.** :meth:`LLMClient.complete` never raises for a failed request; it returns
  a :class:`ChatResult` with ``error`` set, so a stage can count failures as a reason instead of
  dying half-way. Failures are never cached. Commands that want a hard stop call
  :func:`require_ok`, which raises :class:`LLMUnavailable` with the fix.
- **Our own retries.** The ``openai`` client runs with ``max_retries=0``; here 429, 5xx, timeouts,
  connection errors and malformed bodies are retried with exponential backoff (jitter derived
  from the request key, so it is reproducible) or the server's ``Retry-After``. Other 4xx
  (bad request, auth, unknown model) are not retried: repeating them cannot help.
- **The API key stays secret.** It is read from the environment variable named in the config
  (default ``OPENAI_API_KEY``; local servers need none) and goes only into the ``Authorization``
  header. It is not a config field, not in reprs, cache files, results, provenance or messages;
  a server that echoes it, in an error or in a successful reply, gets it replaced by ``***``
  before the reply is cached or returned.

- **Images too.** :meth:`LLMClient.generate_images` asks for a generated image (text-to-image
  tasks) through the same cache, retries and concurrency; how each kind of request is sent and
  its reply read is :mod:`.llm_attempts` (images: :mod:`.llm_images`).

Message builders live in :mod:`.llm_messages` and the disk cache in :mod:`.llm_cache`; the
names callers use are re-exported here, so this stays the one module to import.
"""

from __future__ import annotations

import base64
import functools
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import openai

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import stable_int
from benchsmith.core.llm_attempts import Answer, Failure
from benchsmith.core.llm_attempts import attempt as send_once
from benchsmith.core.llm_cache import CACHE_FORMAT as CACHE_FORMAT
from benchsmith.core.llm_cache import DEFAULT_CACHE_DIR, AnswerCache, request_key
from benchsmith.core.llm_images import IMAGE_APIS as IMAGE_APIS
from benchsmith.core.llm_images import image_params
from benchsmith.core.llm_messages import IMAGE_DETAILS as IMAGE_DETAILS
from benchsmith.core.llm_messages import image_mime as image_mime
from benchsmith.core.llm_messages import image_part as image_part
from benchsmith.core.llm_messages import text_part as text_part
from benchsmith.core.llm_messages import user_message as user_message
from benchsmith.core.progress import progress_bar
from benchsmith.core.urls import without_credentials

PLACEHOLDER_KEY = "not-needed"  # sent when the key variable is unset: local servers ignore it


class LLMUnavailable(BenchsmithError):
    """Some LLM requests failed (server down, wrong model, junk replies) and the caller needs all."""


@dataclass(frozen=True)
class LLMConfig:
    """Where and how to ask. ``base_url`` falls back to ``$OPENAI_BASE_URL``.

    ``cache_dir`` is relative to the working directory unless absolute; ``None`` disables the
    cache (every run asks again, so nothing is reproducible: only for experiments).
    """

    model: str
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    max_concurrency: int = 4
    max_retries: int = 5
    timeout_s: float = 60.0
    backoff_initial_s: float = 0.5
    backoff_max_s: float = 20.0
    temperature: float = 0.0
    max_tokens: int | None = None
    cache_dir: Path | None = DEFAULT_CACHE_DIR

    def __post_init__(self) -> None:
        if not self.model:
            raise BenchsmithError("no model name given", fix="pass --model NAME")
        if self.max_concurrency < 1 or self.max_retries < 0 or self.timeout_s <= 0:
            raise BenchsmithError(
                "LLM concurrency must be >= 1, retries >= 0 and the timeout > 0",
                fix="fix --concurrency / --max-retries / --timeout",
            )

    def resolved_base_url(self) -> str:
        url = self.base_url or os.environ.get("OPENAI_BASE_URL")
        if not url:
            raise BenchsmithError(
                "no LLM server address: neither --base-url nor OPENAI_BASE_URL is set",
                fix="pass --base-url http://HOST:PORT/v1 or export OPENAI_BASE_URL",
            )
        return url

    def params(self, max_tokens: int | None = None) -> dict[str, Any]:
        """Sampling parameters sent with (and hashed into the key of) every request."""
        return {
            "temperature": self.temperature,
            "max_tokens": max_tokens if max_tokens is not None else self.max_tokens,
        }


@dataclass(frozen=True)
class ChatResult:
    key: str  # request key (cache key)
    model: str  # the model that was asked
    text: str | None  # the reply, None when the request failed
    error: str | None  # why it failed, None on success
    cached: bool  # answered from the cache, no request sent
    attempts: int  # HTTP requests sent for this result (0 when cached)
    image: bytes | None = None  # the generated image, for requests that ask for one

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class LLMStats:
    """Counters: ``requests`` = HTTP requests sent (retries included)."""

    requests: int = 0
    cache_hits: int = 0
    retries: int = 0
    errors: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    def keys(self) -> list[str]:  # mapping protocol, so ``dict(client.stats)`` works too
        return list(self.as_dict())

    def __getitem__(self, name: str) -> int:
        return self.as_dict()[name]


def provenance_record(result: ChatResult) -> dict[str, str]:
    """What provenance evidence records about an LLM answer: which model, which cached reply."""
    return {"model": result.model, "cache_key": result.key}


def require_ok(results: Sequence[ChatResult], what: str = "LLM requests") -> None:
    """Raise :class:`LLMUnavailable` if any result failed (for commands that need every answer)."""
    failed = [r for r in results if not r.ok]
    if failed:
        raise LLMUnavailable(
            f"{len(failed)} of {len(results)} {what} failed; first error: {failed[0].error}",
            fix="check that the server (--base-url / OPENAI_BASE_URL) is up and serves the model, "
            "then rerun: answered requests are cached and are not sent again",
        )


REDACTED = "***"  # what replaces the API key wherever a server echoed it
# A reply is the model's output, kept as it came: the key is taken out of it only when it is
# long enough that finding it there is an echo, never a coincidence (with a key "B", every "B"
# a model answers would otherwise become "***"). Real keys are 30-160 characters.
MIN_KEY_TO_REDACT_IN_REPLIES = 12


@functools.lru_cache(maxsize=16)
def _openai_client(endpoint: str, api_key: str, timeout_s: float) -> openai.OpenAI:
    """One HTTP client per endpoint, key and timeout in a process (it is thread-safe): the
    clients of a curation's stages share its connection pool, and its TLS context is built
    once (loading the CA store costs 50 ms a client). Retries are ours, never the library's."""
    return openai.OpenAI(base_url=endpoint, api_key=api_key, max_retries=0, timeout=timeout_s)


class LLMClient:
    """Thread-safe client with cache, retries and bounded concurrency; see the module docstring."""

    def __init__(self, config: LLMConfig):
        self.config = config
        self._endpoint = config.resolved_base_url()  # only the HTTP client sees credentials
        self.base_url = without_credentials(self._endpoint)
        api_key = os.environ.get(config.api_key_env) or PLACEHOLDER_KEY
        self._secret = api_key if api_key != PLACEHOLDER_KEY else None
        self._openai = _openai_client(self._endpoint, api_key, config.timeout_s)
        self.stats = LLMStats()
        self._lock = threading.Lock()
        self._cache = AnswerCache(config.cache_dir)

    def __repr__(self) -> str:
        return f"LLMClient(model={self.config.model!r}, base_url={self.base_url!r})"

    @property
    def model(self) -> str:
        return self.config.model

    def key_for(self, messages: list[dict[str, Any]], *, max_tokens: int | None = None) -> str:
        return request_key(self.config.model, messages, self.config.params(max_tokens))

    def complete(
        self, messages: list[dict[str, Any]], *, max_tokens: int | None = None
    ) -> ChatResult:
        """One request: the cached answer if any, else ask (with retries). Never raises."""
        params = self.config.params(max_tokens)
        key = request_key(self.config.model, messages, params)
        return self._cache_read(key) or self._call(key, messages, params)

    def complete_many(
        self,
        requests: Sequence[list[dict[str, Any]]],
        *,
        max_tokens: int | None = None,
        desc: str = "",
    ) -> list[ChatResult]:
        """Results in input order; at most ``max_concurrency`` requests in flight.

        Cache hits are served first without using a worker; identical requests in one batch are
        sent once.
        """
        return self._many(requests, self.config.params(max_tokens), desc)

    def generate_images(
        self,
        requests: Sequence[list[dict[str, Any]]],
        *,
        api: str = "chat",
        max_tokens: int | None = None,
        desc: str = "",
    ) -> list[ChatResult]:
        """Like :meth:`complete_many`, asking for an image each (``result.image``, its bytes,
        decoded and checked): ``api="chat"`` from a chat-completions endpoint that answers with
        an image (in-context requests), ``"images"`` from ``/images/generations`` (a text
        prompt only). Cached like text answers, under a key that says an image was asked."""
        params = {**self.config.params(max_tokens), **image_params(api)}
        if api == "images":
            params = {"output": params["output"]}  # that endpoint takes no sampling params
        return self._many(requests, params, desc)

    def _many(
        self, requests: Sequence[list[dict[str, Any]]], params: dict[str, Any], desc: str
    ) -> list[ChatResult]:
        results: list[ChatResult | None] = [None] * len(requests)
        pending: dict[str, tuple[list[int], list[dict[str, Any]]]] = {}
        for index, messages in enumerate(requests):
            key = request_key(self.config.model, messages, params)
            if key in pending:
                pending[key][0].append(index)
            elif (hit := self._cache_read(key)) is not None:
                results[index] = hit
            else:
                pending[key] = ([index], messages)
        with progress_bar(total=len(requests), desc=desc or self.config.model, unit="req") as bar:
            bar.update(len(requests) - sum(len(indexes) for indexes, _ in pending.values()))
            if pending:
                workers = min(self.config.max_concurrency, len(pending))
                with ThreadPoolExecutor(max_workers=workers) as pool:
                    futures = {
                        pool.submit(self._call, key, messages, params): key
                        for key, (_, messages) in pending.items()
                    }
                    for future in as_completed(futures):
                        result = future.result()
                        first, *repeats = pending[futures[future]][0]
                        results[first] = result
                        for index in repeats:
                            results[index] = replace(result, cached=result.ok, attempts=0)
                        bar.update(1 + len(repeats))
        return [r for r in results if r is not None]

    # -- internals -------------------------------------------------------------------------------
    def _count(self, **deltas: int) -> None:
        with self._lock:
            for name, delta in deltas.items():
                setattr(self.stats, name, getattr(self.stats, name) + delta)

    def _redact(self, text: str) -> str:
        return text.replace(self._secret, REDACTED) if self._secret else text

    @property
    def _redacts_replies(self) -> bool:
        return bool(self._secret) and len(self._secret) >= MIN_KEY_TO_REDACT_IN_REPLIES

    def _redact_answer(self, answer: Answer) -> Answer:
        """A server may echo the key in a *successful* reply (a debugging proxy, a prompt that
        asks for it): the text and every string field are redacted before anything is kept,
        so the cache, predictions, decisions and cards never hold it; unless the key is too
        short to tell an echo from an answer (``MIN_KEY_TO_REDACT_IN_REPLIES``): model output
        is then kept as it came. Error messages are always redacted."""
        if not self._redacts_replies:
            return answer
        extra = {k: self._redact(v) if isinstance(v, str) else v for k, v in answer.extra.items()}
        reason = self._redact(answer.finish_reason) if answer.finish_reason else None
        return Answer(self._redact(answer.text), reason, extra, answer.image)

    def _backoff_s(self, key: str, attempt: int, retry_after: float | None) -> float:
        cap = self.config.backoff_max_s
        if retry_after is not None:
            return min(max(retry_after, 0.0), cap)
        base = min(cap, self.config.backoff_initial_s * 2 ** (attempt - 1))
        jitter = stable_int(f"{key}:{attempt}") / 2**32  # reproducible, differs per request
        return base * (0.5 + 0.5 * jitter)

    def _call(self, key: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> ChatResult:
        failure = Failure("not attempted", False)
        attempts = 0
        for attempt in range(self.config.max_retries + 1):
            if attempt:
                time.sleep(self._backoff_s(key, attempt, failure.retry_after))
                self._count(retries=1)
            attempts += 1
            self._count(requests=1)
            outcome = self._attempt(messages, params)
            if isinstance(outcome, Answer):
                outcome = self._redact_answer(outcome)
                self._cache_write(key, outcome)
                return ChatResult(key, self.config.model, outcome.text, None, False, attempts,
                                  outcome.image)  # fmt: skip
            failure = outcome
            if not failure.retryable:
                break
        self._count(errors=1)
        error = self._redact(failure.error)
        return ChatResult(key, self.config.model, None, error, False, attempts)

    def _attempt(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> Answer | Failure:
        return send_once(self._openai, self.config.model, messages, params,
                         timeout_s=self.config.timeout_s, base_url=self.base_url)  # fmt: skip

    def _cache_read(self, key: str) -> ChatResult | None:
        entry = self._cache.read(key)
        if entry is None:
            return None
        self._count(cache_hits=1)
        text = entry["text"]  # as the model answered (and as cached: the file is never rewritten)
        if self._redacts_replies:  # a cache written by an older version, or by hand
            text = self._redact(text)
        image = entry.get("image_base64")
        image_bytes = base64.b64decode(image) if isinstance(image, str) else None
        return ChatResult(key, str(entry.get("model", self.config.model)), text, None, True, 0,
                          image_bytes)  # fmt: skip

    def _cache_write(self, key: str, answer: Answer) -> None:
        self._cache.write(
            key,
            {
                "key": key,
                "model": self.config.model,
                "text": answer.text,
                "finish_reason": answer.finish_reason,
                **answer.extra,
                **(
                    {"image_base64": base64.b64encode(answer.image).decode("ascii")}
                    if answer.image is not None
                    else {}
                ),  # fmt: skip
            },
        )
