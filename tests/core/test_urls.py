"""Credentials in a URL are never written down: build_info, logs and errors get it without."""

from __future__ import annotations

import dataclasses

import pytest

from benchsmith.core.llm import LLMClient, LLMConfig
from benchsmith.core.urls import without_credentials


@pytest.mark.parametrize(
    ("url", "written"),
    [
        ("http://user:SECRET@host:8080/v1", "http://host:8080/v1"),
        ("http://user@host/v1", "http://host/v1"),
        ("https://host/v1?api_key=SECRET&model=x", "https://host/v1?api_key=***&model=x"),
        ("https://host/v1?token=SECRET", "https://host/v1?token=***"),
        ("http://[::1]:9/v1", "http://[::1]:9/v1"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        ("http://host:notaport/v1", "***"),
        (None, None),
    ],
)
def test_without_credentials(url, written):
    assert without_credentials(url) == written


def test_the_llm_client_shows_no_credentials_but_uses_them(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    client = LLMClient(LLMConfig(model="m", base_url="http://user:SECRET@127.0.0.1:9/v1"))
    assert "SECRET" not in client.base_url and "SECRET" not in repr(client)
    assert "SECRET" in str(client._openai.base_url)  # the HTTP client still authenticates


def test_curated_build_info_records_the_endpoint_without_credentials():
    from benchsmith.curate.config import config_from_params

    config = config_from_params({"llm": {"base_url": "http://u:SECRET@h:1/v1?key=S2"}})
    assert config.hashable()["llm"]["base_url"] == "http://h:1/v1?key=***"
    config = dataclasses.replace(
        config, llm=dataclasses.replace(config.llm, base_url="http://u:SECRET@h:1/v1?key=S2")
    )
    recorded = config.hashable()["llm"]["base_url"]
    assert recorded == "http://h:1/v1?key=***"
