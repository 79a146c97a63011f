"""MMIU answer extraction: our chain, and the official rules reproduced case by case."""

from __future__ import annotations

import pytest

from benchsmith.options.option_letters import extract_letter
from benchsmith.scoring.mmiu_parse import (
    legacy_choice,
    legacy_correct,
    legacy_judge_prompt,
)

OPTIONS = ["[1, 2, 3, 4]", "[2, 1, 4, 3]", "red cube", "blue sphere"]


@pytest.mark.parametrize(
    ("reply", "letter", "step"),
    [
        ("B", "B", "exact"),
        (" (c). ", "C", "exact"),
        ("d", "D", "exact"),
        ("B. The second order", "B", "leading"),
        ("(A) because the pieces fit", "A", "leading"),
        ("I think the answer is C.", "C", "cue"),
        ("Answer: D", "D", "cue"),
        ("The correct option D fits best", "D", "cue"),
        ("故选：B", "B", "cue"),
        ("I would go with (C) here", "C", "bracketed"),
        ("image none", None, "refusal"),  # the release's failure string: no answer
        ("unstable red cube", "C", "option_text"),
        ("A cube, red", None, "none"),  # "A" is an article here, not option A
        ("It is the blue sphere.", "D", "option_text"),
        ("[2, 1, 4, 3]", "B", "option_text"),
        ("E", None, "none"),  # not an option of a 4-option item
        ("red cube or blue sphere", None, "none"),  # two option texts: not unique
        ("I cannot tell", None, "none"),
        ("", None, "none"),
        (None, None, "none"),
    ],
)
def test_extraction_chain(reply, letter, step):
    assert extract_letter(reply, OPTIONS) == (letter, step)


@pytest.mark.parametrize(
    ("reply", "model", "choice"),
    [
        ("B", "", "B"),
        (" (b). ", "", "b"),  # stripped of . , ( ) at the ends, case kept
        ("\u00a0C", "", "C"),  # NBSP removed
        ("n", "", "n"),  # a-n are letters to the official check
        ("o", "", None),  # not in a-n: the judge decides
        ("model error", "", "Z"),
        ("image none", "", "Z"),
        ("", "", "Z"),
        ("This is copyrighted material", "Claude3", "Z"),
        ("This is copyrighted material", "GPT4o", None),
        ("The answer is B", "", None),
    ],
)
def test_legacy_choice(reply, model, choice):
    assert legacy_choice(reply, model) == choice


def test_legacy_correct_is_a_substring_test():
    assert legacy_correct("B", "B") and legacy_correct("b", " B ")
    assert legacy_correct("", "B")  # the official trap: an empty choice is right
    assert not legacy_correct("B.", "B") and not legacy_correct("Z", "B")


def test_legacy_judge_prompt_ends_with_the_asked_item():
    prompt = legacy_judge_prompt("Which order", "A: x\nB: y", "the second")
    assert prompt.startswith("You are an AI assistant who will help me to match an answer")
    assert prompt.endswith("Example 3: \nQuestion: Which order?\nOptions: A: x\nB: y\n"
                           "Answer: the second\nYour output: ")  # fmt: skip
