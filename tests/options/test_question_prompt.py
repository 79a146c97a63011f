"""The shared task prompt (lmms-eval conventions), also as it arrives at a real server."""

from __future__ import annotations

import pytest
from chat_server import ChatServer, Reply

from benchsmith.core.llm import LLMClient, LLMConfig, user_message
from benchsmith.options.question_prompt import option_letter, render_prompt


def test_multiple_choice_lists_lettered_options_then_the_letter_instruction():
    prompt = render_prompt("  Which animal is shown?\n", ["cat", "dog", "owl"])
    assert prompt.splitlines() == [
        "Which animal is shown?",
        "A. cat",
        "B. dog",
        "C. owl",
        "Answer with the option's letter from the given choices directly.",
    ]


@pytest.mark.parametrize("choices", [None, []])
def test_open_questions_ask_for_a_single_word_or_phrase(choices):
    assert render_prompt("What colour is the bus?", choices) == (
        "What colour is the bus?\nAnswer the question using a single word or phrase."
    )


def test_instruction_replaces_the_suffix_and_empty_means_none():
    assert render_prompt("Describe it.", None, instruction="One sentence.") == (
        "Describe it.\nOne sentence."
    )
    assert render_prompt("Q?", ["x", "y"], instruction="") == "Q?\nA. x\nB. y"


def test_more_than_26_options_is_an_error():
    assert option_letter(25) == "Z"
    with pytest.raises(ValueError, match="26"):
        render_prompt("Q?", [str(i) for i in range(27)])


def test_prompt_reaches_the_server_verbatim(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    prompt = render_prompt("Wie viele Äpfel?", ["zwei", "drei"])
    with ChatServer(reply=lambda body: Reply("A")) as server:
        client = LLMClient(LLMConfig(model="m", base_url=server.base_url, cache_dir=tmp_path))
        assert client.complete([user_message(prompt)]).text == "A"
    assert server.requests[0].body["messages"] == [{"role": "user", "content": prompt}]
