"""MMIU answer extraction: from a model's reply to an option letter, and the official rules.

Our policy (:func:`extract_letter`), in order, each step only when the previous found nothing:

1. **exact letter**: the reply, stripped of spaces and of ``. , ( ) :`` around it, is one
   letter of the item's options (either case);
2. **answer patterns**: a leading ``(B)``, ``B.``, ``B:``, ``B)`` or ``B `` followed by text;
   ``answer is B``, ``answer: B``, ``option B``, ``choice B`` (the first such phrase wins);
3. **option text**: exactly one option's text (normalised: case, spaces) appears in the reply,
   or the reply is an option's text;
4. otherwise nothing: the optional LLM judge (:mod:`benchsmith.scoring.mmiu`) may still map
   it; a reply no step maps is wrong and counted as unparsed.

The official rules (``evaluate.py`` + ``evaluate_correct.py`` of OpenGVLab/MMIU), for
``--legacy``: :func:`legacy_choice` and :func:`legacy_correct`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

_STRIP = " \t\r\n.,():"
_LEADING = re.compile(r"^\(?([A-Za-z])\)?(?:[.:)]|\s)\s*\S")
_PHRASES = re.compile(
    r"(?:answer\s*(?:is|:)|option|choice)\s*[:\-]?\s*\(?([A-Za-z])\)?(?![A-Za-z])",
    re.IGNORECASE,
)


def letters_for(options: Sequence[str]) -> str:
    return "".join(chr(ord("A") + k) for k in range(len(options)))


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def extract_letter(response: str | None, options: Sequence[str]) -> tuple[str | None, str]:
    """(letter or None, the step that found it: exact | pattern | option_text | none)."""
    if not response:
        return None, "none"
    valid = letters_for(options)
    text = str(response).replace("\u00a0", " ").strip()
    bare = text.strip(_STRIP)
    if len(bare) == 1 and bare.upper() in valid:
        return bare.upper(), "exact"
    leading = _LEADING.match(text)
    if leading and leading.group(1).isupper() and leading.group(1) in valid:
        return leading.group(1), "pattern"
    for match in _PHRASES.finditer(text):
        letter = match.group(1).upper()
        if letter in valid:
            return letter, "pattern"
    said = _norm(text)
    found = [k for k, option in enumerate(options) if _norm(option) and _norm(option) in said]
    if len(found) == 1:
        return valid[found[0]], "option_text"
    return None, "none"


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
