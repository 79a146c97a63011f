"""MULTI's points, as the paper defines them, with an answer extraction that reads what models
write. Per question, ``(points, possible, detail)``:

- **SA**: 1 point for the right letter (:func:`benchsmith.options.option_letters.extract_letter`:
  "B", "（B）", "【B】", "**B**", "故选A", "答案是 B", "The answer is B", a unique option text);
- **MA**: one point per correct letter chosen, zero if any wrong letter is chosen (ACE answered
  AC gets 2, BC 0, ABCE 0), out of the number of correct letters; ``exact`` (MA-Acc) when the
  chosen set is the gold set. Letters are read from the answer part of the reply, as one run
  (``ACE``) or single letters apart (``A, C, E``, ``A、C、E``, ``A和C``, ``(A)(C)``); a group
  that mixes both (``AC and B``) is no clear set: unparsed;
- **FB**: one point per blank (``[MASK]``), the reply's and the gold's blanks split at line
  breaks and ``;``/``；`` (the release writes some two-blank answers as ``春；秋``), each read
  the same way on both sides (NFKC, LaTeX wrappers and ``$`` removed, ``\\frac{a}{b}`` as
  ``a/b``, spaces and a final full stop dropped, Latin case ignored) and compared with the gold
  or any of its ``或`` alternatives;
- **OP**: ROUGE-L F over jieba tokens (``rouge_chinese``) of the reply and the gold, both read
  the same way, out of 1;
- **Other** (drawing and the like): not scored (0 of 0), counted.

**Cleanup** before reading: the reply read as every scorer reads it
(:func:`~benchsmith.options.option_letters.read_reply`: full-width forms, ``<think>`` blocks,
chat prefixes, Markdown and LaTeX wrappers), then the part after a final "answer is", "答案是",
"答案为", "答案：", "故选" or "Answer:" kept. A **rejection** (the reply says the image is
missing: ``缺少图片信息``, "image is missing", "cannot see the image", ...) scores 0 and is
counted. Nothing is scaled by a hard-coded denominator: totals are the sums of what was asked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from benchsmith.options.option_letters import extract_letter, read_reply

REJECTIONS = (
    "缺少图片信息",
    "没有看到图片",
    "无法看到图片",
    "image is missing",
    "missing image",
    "cannot see the image",
    "no image was provided",
)
ANSWER_LEAD = re.compile(
    r"(?:answer\s*(?:is|:)\s*:?|答案\s*(?:应该?[是为]\s*[：:]?|[是为]\s*[：:]?|[：:])|[故应]选\s*[：:]?"
    r"|^\s*选\s*[：:]?)\s*",
    re.IGNORECASE,
)
LETTER_SEPARATOR = r"(?:\s*(?:[,，、/;；&]|和|与|及|and|AND)\s*|\s+)"
MA_GROUP = re.compile(
    rf"(?<![A-Za-z])[(\[【]?([A-M]+[)\]】]?(?:{LETTER_SEPARATOR}[(\[【]?[A-M]+[)\]】]?)*)(?![A-Za-z])"
)
FRACTION = re.compile(r"\\[dt]?frac\s*\{([^{}]*)\}\s*\{([^{}]*)\}")


@dataclass(frozen=True)
class QuestionScore:
    points: float
    possible: float
    exact: bool  # everything right (MA: MA-Acc)
    rejected: bool = False
    unparsed: bool = False


def clean_reply(reply: str | None) -> str:
    """The answer part of a reply: read as every scorer reads it
    (:func:`~benchsmith.options.option_letters.read_reply`), then what follows its last
    answer cue ("The answer is", "答案：", "故选")."""
    text = read_reply(reply)
    leads = list(ANSWER_LEAD.finditer(text))
    if leads:
        return text[leads[-1].end() :].strip()
    return text.strip()


def is_rejection(reply: str | None) -> bool:
    text = (reply or "").casefold()
    return any(phrase.casefold() in text for phrase in REJECTIONS)


def chosen_letters(text: str, n_options: int) -> set[str] | None:
    """The letters an MA reply chooses: its first group of option letters, written as one run
    (``ACE``) or as single letters apart (``A, C, E``, ``A、C``, ``A和C``, ``(A)(C)``). A group
    that mixes the two (``AC and B``) says no clear set: None, as when there is no group."""
    valid = {chr(ord("A") + k) for k in range(n_options)}
    text = re.sub(r"[)\]】]\s*[(\[【]", ",", text)  # (A)(C): two letters apart
    for match in MA_GROUP.finditer(text.upper() if len(text) <= 12 else text):
        tokens = re.findall(r"[A-M]+", re.sub(r"AND", " ", match.group(1)))
        if not {c for token in tokens for c in token} & valid:
            continue
        if len(tokens) > 1 and any(len(token) > 1 for token in tokens):
            return None  # a run and single letters mixed: no clear set
        letters = {c for token in tokens for c in token}
        return letters if letters <= valid else None
    return None


def normalise_blank(text: str) -> str:
    """A short answer as it is compared, gold and reply alike: NFKC, LaTeX fractions as
    ``a/b``, ``$``, ``\\left``/``\\right``, spaces and a final full stop removed, Latin case
    ignored."""
    text = read_reply(text)
    text = FRACTION.sub(r"\1/\2", text).replace("$", "")
    text = re.sub(r"\\(?:left|right|,|;|!)", "", text)
    return re.sub(r"\s+", "", text).rstrip("。.").casefold()


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

    gold = clean_reply(gold)  # read like the reply: a label "The answer is X" is X
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
        if result.unparsed and text != read_reply(reply):  # the cue's sentence held the letter
            result = score_single(read_reply(reply), gold, options)
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
