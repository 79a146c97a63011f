"""What the LLM client's tests share: no key or server address from the environment, and a
chat-completions server on 127.0.0.1 per test (tests/chat_server.py)."""

from __future__ import annotations

import pytest
from chat_server import ChatServer


@pytest.fixture
def clean_llm_env(monkeypatch):
    """Neither OPENAI_API_KEY nor OPENAI_BASE_URL set: each test says what it uses."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


@pytest.fixture
def server(clean_llm_env):
    with ChatServer() as srv:
        yield srv
