"""Answer normalisation and matching for the VL-ICL image-to-text tasks.

The original scorer (``evals/eval.py`` in ``ys-zong/VL-ICL``, spec §4) first normalises every
prediction with :func:`original_normalise` and then compares it with ``str(answer)``
case-insensitively. Four of its rules misjudge answers that are plainly right or wrong, so
benchsmith scores in one of two modes:

``legacy``
    The original behaviour, kept so that numbers can be compared with the paper:

    - operators: the first ``\\d+`` of the prediction, so the sign is dropped and a negative gold
      answer (``"-5"``) can never match;
    - clevr: exact match (the digit extraction of the original only fires for ``clevr_simple``),
      so ``"3 objects"`` is wrong;
    - open_mi: exact match, so ``"a dax"`` is wrong;
    - matching_mi: a Yes-item is right when ``"yes"`` occurs anywhere, a No-item when it does not,
      so an empty or garbage answer is a correct "No".

``fixed`` (the default)
    The reply read as models write it (:func:`answer_text`: full-width digits, ``<think>``
    blocks, chat prefixes, Markdown, ``\\boxed{}`` and a leading "Answer:" taken away), the
    same :func:`original_normalise`, then:

    - operators: the first *signed* integer (``-?\\d+``, a Unicode minus counts as ``-``),
      compared as integers;
    - clevr: the first integer or number word ``zero`` .. ``twenty``, whichever comes first
      (``"three objects"`` -> 3), compared as integers; a sign is kept (``"-2"`` is not 2);
    - operators and clevr: a hedge between different numbers (``"2 or 3"``, ``"2-3"``,
      ``"2 to 3"``, ``"2/3"``, ``"between 2 and 3"``, ``"two or three"``) is wrong, never
      "first number wins"; for operators only ``or`` and ``between ... and`` hedge, because
      ``-`` and ``/`` there are arithmetic;
    - open_mi: case-insensitive after removing surrounding quotes, trailing punctuation, an
      echoed ``"This is"`` and a leading article (a/an/the): ``"This is a dax!"`` -> ``dax``;
    - matching_mi: the first standalone ``yes`` or ``no`` decides; no such word is wrong for
      Yes- and No-items alike;
    - textocr: the reply's first line, *not* cut at a ``.`` (the original's cut makes
      ``www.ikea.com`` read ``www``), without surrounding quotes, trailing punctuation or an
      echoed "The text (in the red box) is", compared case-insensitively with the gold read
      the same way (legacy: the original's cut, then exact).

Every function here is pure; ``None`` (no response at all) is handled by the caller, which always
scores it as wrong.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal

from benchsmith.options.option_letters import read_reply

Mode = Literal["fixed", "legacy"]
MODES: tuple[Mode, ...] = ("fixed", "legacy")

Matcher = Callable[[str, str], bool]
"""``(prediction, gold_answer) -> correct``; the prediction is the raw response text."""

_UNSIGNED_INT = re.compile(r"\d+")
_SIGNED_INT = re.compile(r"-?\d+")
_MINUS_SIGNS = str.maketrans({"\u2212": "-"})  # the Unicode minus sign, not dashes
# fmt: off
_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen", "twenty",
)
# fmt: on
NUMBER_WORDS: dict[str, int] = {word: value for value, word in enumerate(_WORDS)}
# A digit run, or a number word that is a whole word and no part of "twenty-one".
_COUNT = re.compile(
    r"\d+|(?<!\w-)\b(?:" + "|".join(NUMBER_WORDS) + r")\b(?!-\w)",
    re.IGNORECASE,
)
_SIGN_BEFORE = re.compile(r"(?:^|[^\w\-])[-\u2212]$")
_HEDGE_GAP = {
    "count": re.compile(r"\s*(?:,?\s*or|to|-|–|—|/|~)\s*", re.IGNORECASE),
    "operator": re.compile(r"\s*,?\s*or\s*", re.IGNORECASE),
}
_BETWEEN = re.compile(r"between\s*$", re.IGNORECASE)
_AND_GAP = re.compile(r"\s*and\s*", re.IGNORECASE)
_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_QUOTES = "\"'`“”‘’*"
_ECHO = re.compile(r"^this\s+is\s+", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:an?|the)\s+", re.IGNORECASE)
_TRAILING_PUNCTUATION = ".,;:!?" + _QUOTES


_ANSWER_LABEL = re.compile(
    r"^\s*(?:the\s+)?(?:final\s+|correct\s+)?answer\s*(?:is\b|:)?\s*:?\s*", re.IGNORECASE
)


def answer_text(prediction: str) -> str:
    """What fixed mode reads: the reply read as every scorer reads replies
    (:func:`benchsmith.options.option_letters.read_reply`: full-width digits, ``<think>``
    blocks, chat prefixes, Markdown and ``\\boxed{}`` taken away), a leading answer label
    ("Answer:", "The answer is") dropped, then the original clean-up."""
    text = _ANSWER_LABEL.sub("", read_reply(prediction), count=1)
    return original_normalise(text)


def original_normalise(prediction: str) -> str:
    """The original clean-up: strip, then cut at the first newline, else at the first ``.``.

    A ``.`` at position 0 is kept (so ``".5"`` stays), and the cut text is *not* stripped again
    (``"dax \\nmore"`` -> ``"dax "``), exactly like ``eval.py``.
    """
    text = prediction.strip()
    cut = text.find("\n")
    if cut <= 0:
        cut = text.find(".")
    return text[:cut] if cut > 0 else text


# --- extraction (fixed mode): what the answer says, or None when it says nothing usable -------


def extract_signed_int(prediction: str) -> int | None:
    """First signed integer of the normalised prediction (``"The answer is -5"`` -> -5)."""
    match = _SIGNED_INT.search(answer_text(prediction).translate(_MINUS_SIGNS))
    return int(match.group()) if match else None


def _count_tokens(text: str) -> list[tuple[int, int, int]]:
    """``(value, start, end)`` of every integer or number word; a leading minus is kept."""
    tokens = []
    for match in _COUNT.finditer(text):
        token = match.group().lower()
        value = int(token) if token.isdigit() else NUMBER_WORDS[token]
        start = match.start()
        if _SIGN_BEFORE.search(text[:start]):
            value, start = -value, start - 1
        tokens.append((value, start, match.end()))
    return tokens


def hedged(prediction: str, kind: str) -> bool:
    """True when two different numbers are offered as alternatives (``"2 or 3"``, ``"2-3"``).

    ``kind`` is ``"count"`` (``or``, ``to``, dashes, ``/``, ``~`` and ``between .. and``) or
    ``"operator"`` (only ``or`` and ``between .. and``: a dash or slash there is arithmetic).
    """
    text = answer_text(prediction).translate(_MINUS_SIGNS)
    if kind == "count":
        numbers = _count_tokens(text)
    else:
        numbers = [(int(m.group()), m.start(), m.end()) for m in _SIGNED_INT.finditer(text)]
    for (left, _, end), (right, start, _) in zip(numbers, numbers[1:], strict=False):
        if left == right:
            continue
        gap = text[end:start]
        if _HEDGE_GAP[kind].fullmatch(gap):
            return True
        if _AND_GAP.fullmatch(gap) and _BETWEEN.search(text[: numbers[0][1]]):
            return True
    return False


def extract_count(prediction: str) -> int | None:
    """First integer or number word (zero..twenty) of the normalised prediction, with its sign."""
    text = answer_text(prediction).translate(_MINUS_SIGNS)
    tokens = _count_tokens(text)
    return tokens[0][0] if tokens else None


def extract_label(prediction: str) -> str | None:
    """The open-ended label: lower case, without quotes, echo, article and final punctuation."""
    text = answer_text(prediction).strip().lower()
    previous = None
    while text != previous:  # the pieces can come in any order ('"This is a dax."')
        previous = text
        text = text.strip().strip(_QUOTES).rstrip(_TRAILING_PUNCTUATION).strip()
        text = _ECHO.sub("", text, count=1)
        text = _ARTICLE.sub("", text, count=1)
    return text or None


def extract_yes_no(prediction: str) -> str | None:
    """``"yes"`` or ``"no"``: the first of the two words in the normalised prediction."""
    match = _YES_NO.search(answer_text(prediction))
    return match.group(1).lower() if match else None


# --- matchers ----------------------------------------------------------------------------------


_TEXT_ECHO = re.compile(  # "The text in the red box is", "Text:" (a lead-in needs its verb or colon)
    r"^(?:the\s+)?(?:text|word)(?:\s+(?:shown|written))?(?:\s+in\s+the\s+(?:red\s+)?box)?"
    r"(?:\s+(?:is|reads|says)\b\s*:?|\s*:)\s*", re.IGNORECASE)  # fmt: skip


def extract_ocr_text(prediction: str) -> str | None:
    """The word a TextOCR reply gives: its first non-empty line (read as every scorer reads
    replies), without an echoed lead-in, surrounding quotes or trailing punctuation."""
    text = _ANSWER_LABEL.sub("", read_reply(prediction), count=1).strip()
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    line = _TEXT_ECHO.sub("", line, count=1)
    return ocr_word(line) or None


def ocr_word(text: str) -> str:
    return text.strip().strip(_QUOTES).rstrip(_TRAILING_PUNCTUATION).strip().casefold()


def match_ocr(prediction: str, gold: str, mode: Mode = "fixed") -> bool:
    """TextOCR: the word inside the red box."""
    if mode == "legacy":
        return _legacy_exact(prediction, gold)
    word = extract_ocr_text(prediction)
    return word is not None and word == ocr_word(gold)


def _legacy_exact(prediction: str, gold: str) -> bool:
    return original_normalise(prediction).lower() == str(gold).lower()


def match_operator(prediction: str, gold: str, mode: Mode = "fixed") -> bool:
    """Operator induction (both variants). Gold is an integer string, possibly negative."""
    if mode == "legacy":
        match = _UNSIGNED_INT.search(original_normalise(prediction))
        return (match.group() if match else "") == str(gold).lower()
    value = extract_signed_int(prediction)
    return value is not None and value == int(gold) and not hedged(prediction, "operator")


def match_clevr(prediction: str, gold: str, mode: Mode = "fixed") -> bool:
    """CLEVR count induction. Gold is a non-negative integer string."""
    if mode == "legacy":
        return _legacy_exact(prediction, gold)
    value = extract_count(prediction)
    return value is not None and value == int(gold) and not hedged(prediction, "count")


def match_open_label(prediction: str, gold: str, mode: Mode = "fixed") -> bool:
    """Fast open MiniImageNet: the nonsense word of the query's class."""
    if mode == "legacy":
        return _legacy_exact(prediction, gold)
    label = extract_label(prediction)
    return label is not None and label == gold.strip().lower()


def match_yes_no(prediction: str, gold: str, mode: Mode = "fixed") -> bool:
    """Matching MiniImageNet. Gold is ``Yes`` or ``No`` (any case)."""
    wanted = gold.strip().lower()
    if mode == "legacy":
        says_yes = "yes" in original_normalise(prediction).lower()
        return says_yes if wanted == "yes" else (wanted == "no" and not says_yes)
    return extract_yes_no(prediction) == wanted


TASK_KINDS: dict[str, str] = {
    "operator_induction": "operator",
    "operator_induction_interleaved": "operator",
    "clevr": "count",
    "open_mi": "label",
    "matching_mi": "yes_no",
    "textocr": "ocr",
}
"""Task name (``_text`` variants use their base task) -> answer kind."""
# answered with an image: a judge's, not ours
TEXT_TO_IMAGE_TASKS = frozenset({"open_t2i_mi", "cobsat", "fast_count_t2i", "fast_attr_t2i"})

_MATCHERS: dict[str, Callable[[str, str, Mode], bool]] = {
    "operator": match_operator,
    "count": match_clevr,
    "label": match_open_label,
    "yes_no": match_yes_no,
    "ocr": match_ocr,
}
_EXTRACTORS: dict[str, Callable[[str], object]] = {
    "operator": extract_signed_int,
    "count": extract_count,
    "label": extract_label,
    "yes_no": extract_yes_no,
    "ocr": extract_ocr_text,
}


def task_kind(task: str) -> str | None:
    """Answer kind of a task, or ``None`` when benchsmith has no scorer for it (a text variant,
    ``<task>_text`` or ``<task>_text_image_query``, has its image task's)."""
    return TASK_KINDS.get(task.removesuffix("_image_query").removesuffix("_text"))


# The original's text tasks by the names its scorer saw (utils.load_text_data): that scorer
# extracts digits when the name holds ``clevr_simple`` or ``operator_induction``, so its
# ``clevr_simple_text`` takes the first number and its ``math_induction_text*`` compare the
# whole normalised answer. Legacy mode replays that, per name.
_LEGACY_TEXT_DIGITS = {"clevr_text": True, "operator_induction_text": False,
                       "operator_induction_interleaved_text": False}  # fmt: skip


def _legacy_text_match(task: str) -> Callable[[str, str], bool]:
    if _LEGACY_TEXT_DIGITS[task]:

        def first_number(prediction: str, gold: str) -> bool:
            match = _UNSIGNED_INT.search(original_normalise(prediction))
            return (match.group() if match else "") == str(gold).lower()

        return first_number
    return _legacy_exact


def matcher(task: str, mode: Mode = "fixed") -> Matcher:
    """The ``(prediction, gold) -> bool`` function of ``task`` in ``mode``."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; use one of {', '.join(MODES)}")
    kind = task_kind(task)
    if kind is None:
        raise ValueError(f"no scorer for task {task!r}; supported: {', '.join(TASK_KINDS)}")
    if mode == "legacy" and task in _LEGACY_TEXT_DIGITS:
        return _legacy_text_match(task)
    match = _MATCHERS[kind]
    return lambda prediction, gold: match(prediction, gold, mode)


def is_unparsed(task: str, prediction: str) -> bool:
    """True when the fixed-mode extraction finds no answer at all (reported, in both modes)."""
    kind = task_kind(task)
    if kind is None:
        raise ValueError(f"no scorer for task {task!r}; supported: {', '.join(TASK_KINDS)}")
    return _EXTRACTORS[kind](prediction) is None
