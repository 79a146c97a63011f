"""MULTI's points, as the paper defines them, with an answer extraction that reads what models
write. Per question, ``(points, possible, detail)``:

- **SA**: 1 point for the right letter (:func:`benchsmith.scoring.option_letters.extract_letter`
  on the cleaned reply: "B", "(B)", "The answer is B", "答案是 B", a unique option text);
- **MA**: one point per correct letter chosen, zero if any wrong letter is chosen (ACE answered
  AC gets 2, BC 0, ABCE 0), out of the number of correct letters; ``exact`` (MA-Acc) when the
  chosen set is the gold set. Letters are read from the answer part of the reply: ``ACE``,
  ``A, C, E``, ``A、C、E``, ``A和C``, ``A and C``;
- **FB**: one point per blank (``[MASK]``), the reply's and the gold's blanks split at line
  breaks and ``;``/``；`` (the release writes some two-blank answers as ``春；秋``), each compared after NFKC, removing ``$`` and spaces and ignoring Latin case,
  against the gold or any of its ``或`` alternatives;
- **OP**: ROUGE-L F over jieba tokens (``rouge_chinese``), out of 1;
- **Other** (drawing and the like): not scored (0 of 0), counted.

**Cleanup** before reading: ``<think>...</think>`` removed, ``\\boxed{...}`` (with or without
``\\text``) unwrapped, and the part after a final "answer is", "答案是", "答案为", "答案：" or
"Answer:" kept. A **rejection** (the reply says the image is missing: ``缺少图片信息``,
"image is missing", "cannot see the image", ...) scores 0 and is counted. Nothing is scaled by a
hard-coded denominator: totals are the sums of what was asked.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from benchsmith.scoring.option_letters import extract_letter

REJECTIONS = (
    "缺少图片信息",
    "没有看到图片",
    "无法看到图片",
    "image is missing",
    "missing image",
    "cannot see the image",
    "no image was provided",
)
THINK = re.compile(r"<think>.*?</think>", re.S | re.IGNORECASE)
BOXED = re.compile(r"\\boxed\s*\{((?:[^{}]|\{[^{}]*\})*)\}", re.S)
TEXT_WRAP = re.compile(r"^\\text\s*\{(.*)\}$", re.S)
ANSWER_LEAD = re.compile(
    r"(?:answer\s*(?:is|:)\s*:?|答案\s*(?:[是为]\s*[：:]?|[：:]))\s*", re.IGNORECASE
)
MA_LETTERS = re.compile(
    r"(?<![A-Za-z])([A-M](?:\s*(?:[,，、/]|和|与|and|&)?\s*[A-M])*)(?![A-Za-z])"
)


@dataclass(frozen=True)
class QuestionScore:
    points: float
    possible: float
    exact: bool  # everything right (MA: MA-Acc)
    rejected: bool = False
    unparsed: bool = False


def clean_reply(reply: str | None) -> str:
    text = THINK.sub("", reply or "")
    text = text.split("</think>")[-1]  # an unclosed think block: what follows its end
    boxed = BOXED.findall(text)
    if boxed:
        inner = boxed[-1].strip()
        wrapped = TEXT_WRAP.match(inner)
        return (wrapped.group(1) if wrapped else inner).strip()
    leads = list(ANSWER_LEAD.finditer(text))
    if leads:
        return text[leads[-1].end() :].strip()
    return text.strip()


def is_rejection(reply: str | None) -> bool:
    text = (reply or "").casefold()
    return any(phrase.casefold() in text for phrase in REJECTIONS)


def chosen_letters(text: str, n_options: int) -> set[str] | None:
    """The letters an MA reply chooses (the first letter group), None when there is none."""
    valid = {chr(ord("A") + k) for k in range(n_options)}
    for match in MA_LETTERS.finditer(text.upper() if len(text) <= 12 else text):
        letters = {c for c in re.sub(r"AND", "", match.group(1)) if c in valid}
        if letters:
            return letters
    return None


def normalise_blank(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("$", "")
    return re.sub(r"\s+", "", text).casefold()


def blanks_of(reply: str) -> list[str]:
    parts = re.split(r"\n+|[;；]", reply.strip())
    return [p.strip() for p in parts if p.strip()]


def score_single(reply: str, gold: str, options: Sequence[str]) -> QuestionScore:
    letter, _ = extract_letter(reply, options) if options else (None, "none")
    if letter is None and not options:  # no option texts: a bare letter still counts
        bare = reply.strip().strip(".,()（）：:").upper()
        letter = bare if len(bare) == 1 and bare.isalpha() else None
    right = letter == gold.strip()
    return QuestionScore(float(right), 1.0, right, unparsed=letter is None)


def score_multiple(reply: str, gold: str, n_options: int) -> QuestionScore:
    wanted = set(gold.strip())
    chosen = chosen_letters(reply, max(n_options, *(ord(c) - 64 for c in wanted)))
    if chosen is None:
        return QuestionScore(0.0, float(len(wanted)), False, unparsed=True)
    points = 0.0 if chosen - wanted else float(len(chosen & wanted))
    return QuestionScore(points, float(len(wanted)), chosen == wanted)


def score_blanks(reply: str, gold: str) -> QuestionScore:
    expected = blanks_of(gold)  # the release also writes two blanks as "春；秋"
    given = blanks_of(reply)
    points = 0
    for said, truth in zip(given, expected, strict=False):
        alternatives = {normalise_blank(a) for a in truth.split("或")} | {normalise_blank(truth)}
        points += normalise_blank(said) in alternatives
    return QuestionScore(float(points), float(len(expected)), points == len(expected),
                         unparsed=not given)  # fmt: skip


def score_open(reply: str, gold: str) -> QuestionScore:
    import jieba
    from rouge_chinese import Rouge

    said, truth = " ".join(jieba.cut(reply)).strip(), " ".join(jieba.cut(gold)).strip()
    if not truth:
        return QuestionScore(0.0, 0.0, False)
    if not said:
        return QuestionScore(0.0, 1.0, False, unparsed=True)
    value = Rouge().get_scores(said, truth, avg=True)["rouge-l"]["f"]
    return QuestionScore(value, 1.0, value >= 0.999)


def score_question(
    reply: str | None, gold: str, question_type: str, options: Sequence[str] = ()
) -> QuestionScore:
    """One question under our policy; ``question_type`` is SA, MA, FB, OP or Other."""
    if question_type == "Other":
        return QuestionScore(0.0, 0.0, False)
    text = clean_reply(reply)
    if question_type == "SA":
        result = score_single(text, gold, options)
    elif question_type == "MA":
        result = score_multiple(text, gold, len(options))
    elif question_type == "FB":
        result = score_blanks(text, gold)
    elif question_type == "OP":
        result = score_open(text, gold)
    else:
        raise ValueError(f"unknown question type {question_type!r}")
    if is_rejection(reply):
        return QuestionScore(0.0, result.possible, False, rejected=True)
    return result
