"""LIME's per-sample judge scores, as LIME computed them (``--judge-scoring lime-legacy``).

LIME ran its nine judges through its fork of lmms-eval (``*_suit`` tasks) and counted a judge
as right when the logged per-sample score was ``>=`` the subtask's cutoff (``filter_func.py``,
no tolerance). This module reproduces those per-sample scores subtask by subtask, written from
the task definitions (spec ``lime.md`` §2, §4); every function takes the judge's raw reply, and
the reply is stripped first, as lmms-eval's ``process_results`` does:

``ai2d``
    A regex filter keeps the letter of a reply that starts with ``X.``, otherwise the whole
    reply; then exact match ignoring case and ASCII punctuation, so ``"[B]"``, ``"B,"`` and
    ``"(B)"`` score 1 but ``"B) a cat"`` and ``"The answer is B"`` score 0.
``scienceqa``
    The reply equals the letter, or starts with ``"<Capital>."`` whose letter equals it.
``pope``
    Lower-cased, stripped reply equals ``yes``/``no`` exactly (``"Yes."`` scores 0).
``ok_vqa``, ``textvqa``
    EvalAI answer processing (as lmms-eval's ``EvalAIAnswerProcessor``), then the mean over
    leave-one-out sets of ``min(1, matches / 3)`` computed with ``statistics.mean``. A single
    gold answer leaves an empty comparison set and scores 0 (OK-VQA: no answers scores 0).
``infovqa``
    ANLS against each gold answer, where the length is that of the *unnormalised* answer and
    reply; with a list of gold answers lmms-eval's multiple-target rule turns any non-zero ANLS
    (>= 0.5) into 1.0, so "close enough" passes the 1.0 cutoff. A single gold string keeps the
    raw ANLS value.
``chartqa``
    ``float()`` both sides (``"12%"`` is 0.12); within 5% relative error when the gold is a
    non-zero number, else case-insensitive equality of the stripped strings.
``ocrbench``
    Gold (any of a list) is a substring of the lower-cased reply after newlines become spaces;
    for rows whose ``dataset`` is ``HME100k`` all spaces are removed and the gold is *not*
    lower-cased, as in the original.

Where the default metrics (:mod:`benchsmith.scoring.metrics`) differ: AI2D/ScienceQA accept the
option letter however it is written (``(B)``, ``The answer is B``, ``B) cat``); POPE ignores a
final period; InfoVQA never turns a partial ANLS into 1.0 (only an exact normalised match
reaches the cutoff); VQA accuracy gives a single gold answer 1.0 on a match; ChartQA reads
``1,234`` and refuses ``nan``/``inf``; all compare with a 1e-9 tolerance at the cutoff.
"""

from __future__ import annotations

import re
import statistics
import string
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from benchsmith.core.text_distance import levenshtein
from benchsmith.scoring.metrics import Gold

LegacyFn = Callable[[str, Gold, Mapping[str, Any]], float]

# --------------------------------------------------------------------------- multiple choice

_LEADING_LETTER_DOT = re.compile(r"^\s*([A-Z])\.")
_NO_PUNCTUATION = str.maketrans("", "", string.punctuation)


def _golds(gold: Gold) -> list[str]:
    return [gold] if isinstance(gold, str) else [str(g) for g in gold]


def ai2d_score(reply: str, gold: Gold, row: Mapping[str, Any]) -> float:
    match = _LEADING_LETTER_DOT.match(reply)
    kept = (match.group(1) if match else reply).strip()
    pred = kept.lower().translate(_NO_PUNCTUATION)
    target = _golds(gold)[0].lower().translate(_NO_PUNCTUATION)
    return float(pred == target)


def scienceqa_score(reply: str, gold: Gold, row: Mapping[str, Any]) -> float:
    pred, target = reply.strip(), _golds(gold)[0]
    if pred == target:
        return 1.0
    if len(pred) >= 2 and pred[0].isupper() and pred[1] == ".":
        return float(pred[0] == target)
    return 0.0


def pope_score(reply: str, gold: Gold, row: Mapping[str, Any]) -> float:
    return float(reply.strip().lower().strip() == _golds(gold)[0].lower().strip())


# --------------------------------------------------------------------------- EvalAI VQA

# Contractions EvalAI restores, written in their restored form. A form with one apostrophe is
# looked up without it ("dont" -> "don't"); a form with two or more under every variant that
# lacks exactly one of them ("couldnt've" and "couldn'tve" -> "couldn't've"). EvalAI's table has
# no key for "lets" or "shes" (those stay as they are), and it maps "somebody'd" the wrong way
# round (to "somebodyd"); both quirks are kept, because the point here is the same verdicts.
_CONTRACTED = (
    "ain't aren't can't could've couldn't couldn't've didn't doesn't don't hadn't hadn't've "
    "hasn't haven't he'd he'd've he's how'd how'll how's I'd've I'm I've isn't it'd it'd've "
    "it'll ma'am mightn't mightn't've might've mustn't must've needn't not've o'clock "
    "oughtn't 'ow's'at shan't she'd've should've shouldn't shouldn't've somebody'd've "
    "somebody'll somebody's someone'd someone'd've someone'll someone's something'd "
    "something'd've something'll that's there'd there'd've there're there's they'd they'd've "
    "they'll they're they've 'twas wasn't we'd've we've weren't what'll what're what's "
    "what've when's where'd where's where've who'd who'd've who'll who's who've why'll why're "
    "why's won't would've wouldn't wouldn't've y'all y'all'll y'all'd've you'd you'd've "
    "you'll you're you've"
)


def _lookup_keys(word: str) -> list[str]:
    marks = [i for i, char in enumerate(word) if char == "'"]
    if len(marks) == 1:
        return [word.replace("'", "")]
    return [word[:i] + word[i + 1 :] for i in marks]


EVALAI_CONTRACTIONS: dict[str, str] = {
    key: word for word in _CONTRACTED.split() for key in _lookup_keys(word)
}
EVALAI_CONTRACTIONS["somebody'd"] = "somebodyd"
_EVALAI_NUMBERS = {
    "none": "0",
    **{
        w: str(i)
        for i, w in enumerate(
            ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
        )
    },
}
_EVALAI_ARTICLES = frozenset({"a", "an", "the"})
_EVALAI_PUNCTUATION = (";", "/", "[", "]", '"', "{", "}", "(", ")", "=", "+", "\\", "_", "-",
                       ">", "<", "@", "`", ",", "?", "!")  # fmt: skip
_COMMA_BETWEEN_DIGITS = re.compile(r"(?<=\d)(\,)+(?=\d)")
_PERIOD_NOT_BEFORE_DIGIT = re.compile(r"(?!<=\d)(\.)(?!\d)")
_EVALAI_PERIOD_LIMIT = 32  # EvalAI passes re.UNICODE (32) where ``sub`` expects ``count``


def evalai_normalize(text: str) -> str:
    """EvalAI answer processing, step for step (including its quirks, for fidelity)."""
    text = text.lower().replace(",", "").replace("?", "").replace("'s", " 's").strip()
    text = text.replace("\n", " ").replace("\t", " ").strip()
    original = text
    remove_all = _COMMA_BETWEEN_DIGITS.search(original) is not None
    for mark in _EVALAI_PUNCTUATION:
        if remove_all or mark + " " in original or " " + mark in original:
            text = text.replace(mark, "")
        else:
            text = text.replace(mark, " ")
    text = _PERIOD_NOT_BEFORE_DIGIT.sub("", text, count=_EVALAI_PERIOD_LIMIT)
    words = []
    for word in text.lower().split():
        word = _EVALAI_NUMBERS.get(word, word)
        if word not in _EVALAI_ARTICLES:
            words.append(word)
    return " ".join(EVALAI_CONTRACTIONS.get(word, word) for word in words)


def vqa_score(reply: str, gold: Gold, row: Mapping[str, Any]) -> float:
    answers = [evalai_normalize(a) for a in _golds(gold)]
    pred = evalai_normalize(reply.strip())
    accuracies = []
    for i in range(len(answers)):
        others = [a for j, a in enumerate(answers) if j != i]
        accuracies.append(min(1, float(sum(a == pred for a in others)) / 3))
    return float(statistics.mean(accuracies)) if accuracies else 0.0


# --------------------------------------------------------------------------- ANLS, relaxed, OCR


def _anls_one(reply: str, answer: str) -> float:
    gold_text = " ".join(answer.strip().lower().split())
    pred_text = " ".join(reply.strip().lower().split())
    length = max(len(answer.upper()), len(reply.upper()))
    value = 1.0 - (0.0 if length == 0 else levenshtein(gold_text, pred_text) / length)
    return 0.0 if value < 0.5 else value


def infovqa_score(reply: str, gold: Gold, row: Mapping[str, Any]) -> float:
    reply = reply.strip()
    if isinstance(gold, str):
        return _anls_one(reply, gold)
    return 1.0 if any(_anls_one(reply, answer) for answer in gold) else 0.0


def _python_float(text: str) -> float | None:
    try:
        return float(text.rstrip("%")) / 100.0 if text.endswith("%") else float(text)
    except ValueError:
        return None


def chartqa_score(reply: str, gold: Gold, row: Mapping[str, Any]) -> float:
    pred, target = reply.strip(), _golds(gold)[0]
    pred_value, target_value = _python_float(pred), _python_float(target)
    if pred_value is not None and target_value:
        return float(abs(pred_value - target_value) / abs(target_value) <= 0.05)
    return float(pred.lower() == target.lower())


def ocrbench_score(reply: str, gold: Gold, row: Mapping[str, Any]) -> float:
    pred = reply.strip().lower().strip()
    hme = row.get("dataset") == "HME100k"
    for answer in _golds(gold):
        if hme:
            target = answer.strip().replace("\n", " ").replace(" ", "")
            text = pred.strip().replace("\n", " ").replace(" ", "")
        else:
            target = answer.lower().strip().replace("\n", " ")
            text = pred.lower().strip().replace("\n", " ")
        if target in text:
            return 1.0
    return 0.0


# --------------------------------------------------------------------------- registry

LEGACY_SUBTASKS: dict[str, tuple[LegacyFn, float]] = {
    "ai2d": (ai2d_score, 1.0),
    "scienceqa": (scienceqa_score, 1.0),
    "pope": (pope_score, 1.0),
    "ok_vqa": (vqa_score, 0.6),
    "textvqa": (vqa_score, 0.6),
    "infovqa": (infovqa_score, 1.0),
    "chartqa": (chartqa_score, 1.0),
    "ocrbench": (ocrbench_score, 1.0),
}
"""LIME subtask -> (per-sample score as lmms-eval logged it, LIME's cutoff)."""

_ALIASES = {"okvqa": "ok_vqa", "scienceqa_img": "scienceqa", "sqa": "scienceqa"}


def legacy_subtask(name: str) -> str | None:
    """The LIME subtask a dataset's subtask name means (``ai2d_suit``, ``OK-VQA``), or None."""
    key = name.strip().lower().replace("-", "_").removesuffix("_suit")
    key = _ALIASES.get(key, key)
    return key if key in LEGACY_SUBTASKS else None


def known_subtasks() -> Sequence[str]:
    return sorted(LEGACY_SUBTASKS)
