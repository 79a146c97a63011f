"""MMIU answer extraction: our policy, and the official rules for ``--legacy``.

Our policy is the shared option-letter extraction
(:func:`benchsmith.options.option_letters.extract_letter`); a reply it cannot map goes to the
optional LLM judge (:mod:`benchsmith.scoring.mmiu`) or counts as wrong and unparsed.

The official rules (``evaluate.py`` + ``evaluate_correct.py`` of OpenGVLab/MMIU), for
``--legacy``: :func:`legacy_choice` and :func:`legacy_correct`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# -- the official scorer ----------------------------------------------------------------------

LEGACY_FAILURES = frozenset(
    {"image none", "model error or image error", "image error", "model error", ""}
)
LEGACY_LETTERS = frozenset("abcdefghijklmn")
LEGACY_GPT_ERROR = "GPT error"


def legacy_prediction(prediction: str) -> str:
    """The reply as ``evaluate.py`` hands it to its letter check: stripped, NBSP removed, then
    leading and trailing ``. , ( )`` removed."""
    text = prediction.strip().replace("\u00a0", "")
    return re.sub(r"^[.,()]+|[.,()]+$", "", text.strip())


def legacy_choice(prediction: str, model: str = "") -> str | None:
    """What ``evaluate.py`` records as the choice without asking its judge: ``Z`` for its
    failure strings (and Claude's copyright refusals, only for the model it names
    ``Claude3``), the stripped reply when it is one letter a-n; None when the judge must be
    asked."""
    stripped = prediction.strip()
    if model == "Claude3" and "copyrighted material" in stripped:
        return "Z"
    if stripped in LEGACY_FAILURES:
        return "Z"
    cleaned = legacy_prediction(prediction)
    if cleaned.strip().lower() in LEGACY_LETTERS:
        return cleaned.strip()
    return None


def legacy_correct(choice: str, gold: str) -> bool:
    """``evaluate_correct.py``'s test: the choice, lower-cased, is a *substring* of the gold
    letter (so an empty choice counts as right, and ``"a."`` does not)."""
    return choice.strip().lower() in gold.strip().lower()


def legacy_judge_prompt(question: str, options: str, prediction: str) -> str:
    """The matching prompt ``evaluate.py`` sends to gpt-4o-mini, to the character."""
    return (
        "You are an AI assistant who will help me to match an answer with several options of a "
        "single-choice question. You are provided with a question, several options, and an "
        "answer, and you need to find which option is most similar to the answer. If the "
        "meaning of all options are significantly different from the answer, output Z. When "
        "the options are mostly numbers, if the model outputs numbers in the same format, "
        "please do not be too precise and try to match an answer as much as possible. Your "
        "should output a single uppercase character in A, B, C, D (if they are valid options), "
        "and Z. \n"
        "Example 1: \n"
        "Question: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat "
        "D. dog\nAnswer: a cute teddy bear\nYour output: A\n"
        "Example 2: \n"
        "Question: What is the main object in image?\nOptions: A. teddy bear B. rabbit C. cat "
        "D. dog\nAnswer: Spider\nYour output: Z\n"
        "Example 3: \n"
        f"Question: {question}?\nOptions: {options}\nAnswer: {prediction}\nYour output: "
    )


def legacy_options_text(options: Sequence[str]) -> str:
    """The release's ``options`` field for our rows: ``A: ...`` lines."""
    return "\n".join(f"{chr(ord('A') + k)}: {o}" for k, o in enumerate(options))
