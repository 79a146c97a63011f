"""Free-text distractors: through the one LLM client against a local server (cached, filtered
to the gold's length), and the deterministic offline pool when there is no model or it fails."""

from __future__ import annotations

import numpy as np
import pytest
from chat_server import ChatServer, Reply, Status

from benchsmith.core.llm import LLMClient, LLMConfig
from benchsmith.options.distractors import DistractorError
from benchsmith.options.text_distractors import (
    POOL_METHOD,
    parse_reply,
    pool_text_distractors,
    text_distractors,
)

GOLD = "a dog runs across a snowy field"
POOL = [
    "a cat sleeps on a sunny windowsill",
    "two children build a sandcastle together",
    "a red bus waits at the station",
    "people",
    "an old man reads the morning newspaper in a quiet crowded park near the lake",
    GOLD,
]


def client(server: ChatServer, tmp_path) -> LLMClient:
    return LLMClient(LLMConfig(model="writer", base_url=server.base_url, cache_dir=tmp_path))


def test_llm_distractors_are_filtered_cached_and_topped_up_from_the_pool(tmp_path):
    reply = ('```json\n["a dog runs across a snowy field", "a horse walks along a sandy beach",'
             ' "no", "A horse walks along a sandy  beach", "a bird sits on a frozen lake"]\n```')  # fmt: skip
    with ChatServer(reply=lambda body: Reply(reply)) as server:
        llm = client(server, tmp_path)
        options, methods = text_distractors("What happens?", GOLD, 3, POOL,
                                            np.random.default_rng(0), llm)  # fmt: skip
        again = text_distractors("What happens?", GOLD, 3, POOL, np.random.default_rng(0), llm)
        assert len(server.requests) == 1  # the second build is answered from the cache
        assert "about as long (7 words)" in server.requests[0].text
    assert options[:2] == ["a horse walks along a sandy beach", "a bird sits on a frozen lake"]
    assert methods == ["llm:writer", "llm:writer", POOL_METHOD] and again == (options, methods)
    assert options[2] in POOL and options[2] != GOLD


def test_offline_and_failing_models_fall_back_to_the_seeded_pool(tmp_path):
    offline = text_distractors("What happens?", GOLD, 3, POOL, np.random.default_rng(4))
    assert offline == text_distractors("What happens?", GOLD, 3, POOL, np.random.default_rng(4))
    assert offline[1] == [POOL_METHOD] * 3
    assert set(offline[0]) <= set(POOL) - {GOLD, "people", POOL[4]}  # lengths near the gold's
    with ChatServer(reply=lambda body: Status(400)) as server:
        failed = text_distractors("What happens?", GOLD, 3, POOL, np.random.default_rng(4),
                                  client(server, tmp_path))  # fmt: skip
    assert failed == offline
    with pytest.raises(DistractorError, match="similar length"):
        pool_text_distractors(GOLD, POOL, 4, np.random.default_rng(0))


def test_reply_parsing():
    assert parse_reply('Sure: ["a", "b"] done') == ["a", "b"]
    assert parse_reply("no list here") == [] and parse_reply(None) == []
    assert parse_reply('["a", 3, {"x": 1}]') == ["a", "3"]
