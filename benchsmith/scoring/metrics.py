"""Per-sample metrics used to decide whether a judge answered a sample correctly (LIME-M).

Each metric is a pure function ``(prediction, gold) -> float`` in ``[0, 1]``, where ``gold`` is
one reference string or a sequence of them. The definitions follow the metrics the LIME-M
subtasks use (spec ``lime.md`` §4); they are written from those definitions, and every place
where they knowingly differ from a reference implementation is named in the function's docstring.

A sample counts as *correct* for a judge when its score is ``>=`` the metric's cutoff (paper
Table 8). The paper writes ``>``, which can never hold for a cutoff of 1.0, so ``>=`` is the only
workable reading (spec §2). :func:`is_correct` also forgives a score up to ``1e-9`` below the
cutoff, because a 0.6 computed elsewhere as a mean of thirds arrives as ``0.5999999999999999``.

BLEU-4 (cutoff 0.2, captioning) is **not implemented**: it needs a tokenizer and corpus-level
conventions that belong with a caption scorer. Caption subtasks must arrive as pre-scored judge
rows (``{"sample_id", "model", "score"}``); :func:`prescored_metric` gives the matching cutoff.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.text_distance import levenshtein

Gold = str | Sequence[str]
MetricFn = Callable[[str, Gold], float]

CUTOFF_TOLERANCE = 1e-9
"""How far below the cutoff a score may sit and still count as at the cutoff (binary rounding)."""


def _golds(gold: Gold) -> list[str]:
    """One reference or several, always as a non-empty list of strings."""
    answers = [gold] if isinstance(gold, str) else [str(g) for g in gold]
    if not answers:
        raise ValueError("no gold answer to compare with")
    return answers


def _text(prediction: str | None) -> str:
    return "" if prediction is None else str(prediction)


# --------------------------------------------------------------------------- exact accuracy

_MARKUP = re.compile(r"[*`]")
_LEADING_LETTER = re.compile(
    r"^\s*(?:[(\[{]([A-Za-z])[)\]}]"  # (B) [B] {B}
    r"|([A-Za-z])(?:[.):]|,(?!\s*[A-Za-z](?:\W|$))|\s*$))"  # B. B) B: B, ... (not "B, C")
)
_ANSWER_LETTER = re.compile(
    r"(?i:\banswer\b)(?:\s+is)?\s*:?\s*"
    r"(?:\(([A-Za-z])\)|([A-Z])\b|([a-z])(?=\s*[.)]?\s*$))"
)


def _normalize_exact(text: str) -> str:
    return text.strip().lower().rstrip(".").strip()


def extract_option_letter(prediction: str) -> str | None:
    """The option letter a response names, or ``None`` when it names none unambiguously.

    Accepts ``B``, ``(B)``, ``[B]``, ``B.``, ``B,``, ``B) text``, ``B: text`` at the start, or
    ``The answer is B`` / ``Answer: (B)`` anywhere. A bare capital followed by a word (``A cat``)
    is not a letter answer, nor is a list of letters (``B, C``): the extractor only removes
    formatting, it never guesses.
    """
    text = _MARKUP.sub("", _text(prediction))
    for pattern in (_LEADING_LETTER, _ANSWER_LETTER):
        match = pattern.search(text)
        if match:
            return next(g for g in match.groups() if g).upper()
    return None


def exact_accuracy(prediction: str, gold: Gold) -> float:
    """1.0 when the normalised prediction equals a gold answer (strip, lowercase, final period).

    When the gold is a single option letter A-Z (AI2D, ScienceQA), the letter the response names
    (:func:`extract_option_letter`) is compared instead, so ``(B)`` and ``The answer is B`` score.
    POPE's yes/no answers are plain normalised matches (``Yes.`` equals ``yes``).
    """
    pred = _normalize_exact(_text(prediction))
    letter = extract_option_letter(_text(prediction))
    for answer in _golds(gold):
        target = _normalize_exact(answer)
        if pred == target:
            return 1.0
        if len(target) == 1 and "a" <= target <= "z" and letter == target.upper():
            return 1.0
    return 0.0


def substring_accuracy(prediction: str, gold: Gold) -> float:
    """1.0 when a gold answer occurs in the prediction, case-insensitively (OCRBench's rule).

    OCRBench's HME100k formulas additionally compare with all whitespace removed; that variant is
    applied when the plain comparison fails, so spacing inside a formula never costs the point.
    """
    pred = _text(prediction).strip().lower()
    squeezed = "".join(pred.split())
    for answer in _golds(gold):
        target = answer.strip().lower()
        if target and (target in pred or "".join(target.split()) in squeezed):
            return 1.0
    return 0.0


# --------------------------------------------------------------------------- VQA accuracy

_VQA_PUNCTUATION = frozenset(';/[]"{}()=+\\_-><@`,?!')
_DIGIT_COMMA = re.compile(r"(?<=\d),(?=\d)")
_STRAY_PERIOD = re.compile(r"\.(?!\d)")
_NUMBER_NAMES = "zero one two three four five six seven eight nine ten"
_NUMBER_WORDS = {word: str(value) for value, word in enumerate(_NUMBER_NAMES.split())}
_NUMBER_WORDS["none"] = "0"  # EvalAI maps "none" to 0 as well
_ARTICLES = frozenset({"a", "an", "the"})
_CONTRACTION_WORDS = (
    "ain't aren't can't could've couldn't didn't doesn't don't hadn't hasn't haven't he'd "
    "he'll he's how'd how'll how's i'd i'll i'm i've isn't it'd it'll let's ma'am mightn't "
    "might've mustn't must've needn't o'clock shan't she'd she'll she's should've shouldn't "
    "that's there's they'd they'll they're they've wasn't we'd we'll we're we've weren't "
    "what'll what're what's what've where'd where's who'd who'll who's who've why'll why're "
    "why's won't would've wouldn't y'all you'd you'll you're you've"
)
_AMBIGUOUS = frozenset({"lets", "hell", "ill", "shell", "well", "were", "wed"})
_CONTRACTIONS = {
    word.replace("'", ""): word
    for word in _CONTRACTION_WORDS.split()
    # "lets", "ill", "well", "were", ... are words of their own: only unambiguous forms map.
    if word.replace("'", "") not in _AMBIGUOUS
}


def _drop_punctuation(text: str) -> str:
    """EvalAI punctuation rule, applied per occurrence.

    A mark next to whitespace (or the text's edge) is deleted, one inside a token becomes a space
    (``x-ray`` -> ``x ray``), a comma between digits is deleted (``1,234`` -> ``1234``) and a
    period is deleted unless a digit follows (``3.5`` stays). EvalAI decides delete-vs-space once
    for the whole string; per occurrence gives the same tokens except in contrived mixes.
    """
    text = _DIGIT_COMMA.sub("", text)
    out = []
    for i, char in enumerate(text):
        if char not in _VQA_PUNCTUATION:
            out.append(char)
            continue
        before = text[i - 1] if i > 0 else " "
        after = text[i + 1] if i + 1 < len(text) else " "
        out.append("" if before.isspace() or after.isspace() else " ")
    return _STRAY_PERIOD.sub("", "".join(out))


def normalize_vqa_answer(text: str) -> str:
    """EvalAI-style answer normalisation: punctuation, number words, articles, contractions."""
    text = _drop_punctuation(_text(text).replace("\n", " ").replace("\t", " ").strip().lower())
    tokens = []
    for token in text.split():
        token = _NUMBER_WORDS.get(token, token)
        if token in _ARTICLES:
            continue
        tokens.append(_CONTRACTIONS.get(token, token))
    return " ".join(tokens)


def vqa_accuracy(prediction: str, gold: Gold) -> float:
    """VQA accuracy: ``min(1, matches / 3)`` averaged over the leave-one-out sets of answers.

    With the usual 10 human answers, leaving answer *i* out and counting how many of the other
    nine equal the prediction gives ``min(1, m_i / 3)``; the score is the mean over *i*. It is
    computed as ``sum(min(3, m_i)) / (3 n)`` in one division so that 2 agreeing annotators give
    exactly 0.6, the LIME cutoff. Both sides are always normalised (EvalAI skips it when all
    answers agree, which only matters for unnormalised predictions). A single gold string has no
    leave-one-out set and scores 1.0 on a normalised match.
    """
    answers = [normalize_vqa_answer(a) for a in _golds(gold)]
    pred = normalize_vqa_answer(prediction)
    hits = [answer == pred for answer in answers]
    if len(hits) == 1:
        return float(hits[0])
    total = sum(hits)
    credit = sum(min(3, total - hit) for hit in hits)
    return credit / (3 * len(hits))


# --------------------------------------------------------------------------- ANLS

ANLS_THRESHOLD = 0.5


def _normalize_anls(text: str) -> str:
    return " ".join(_text(text).lower().split())


def anls(prediction: str, gold: Gold) -> float:
    """Average Normalised Levenshtein Similarity for one sample (InfoVQA, DocVQA).

    ``1 - lev(p, g) / max(len(p), len(g))`` on lowercased, whitespace-collapsed text, maximised
    over the gold answers; a similarity below 0.5 becomes 0 (exactly 0.5 is kept).
    """
    pred = _normalize_anls(prediction)
    best = 0.0
    for answer in _golds(gold):
        target = _normalize_anls(answer)
        longest = max(len(pred), len(target))
        similarity = 1.0 if longest == 0 else 1.0 - levenshtein(pred, target) / longest
        best = max(best, similarity)
    return best if best >= ANLS_THRESHOLD else 0.0


# --------------------------------------------------------------------------- relaxed accuracy

RELAXED_TOLERANCE = 0.05
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)")


def _normalize_relaxed(text: str) -> str:
    return _text(text).strip().rstrip(".").strip()


def parse_number(text: str) -> float | None:
    """A number written as ``12``, ``-3.5``, ``1,234`` or ``12%`` (= 0.12); otherwise ``None``."""
    text = _normalize_relaxed(text)
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    percent = text.endswith("%")
    body = text[:-1].strip() if percent else text
    if not _PLAIN_NUMBER.fullmatch(body):
        return None
    value = float(body)
    return value / 100 if percent else value


def relaxed_accuracy(prediction: str, gold: Gold) -> float:
    """ChartQA relaxed accuracy: numbers within 5% relative error, other answers exact.

    Numbers compare with ``|p - g| <= 0.05 |g|`` (a relative 1e-9 slack absorbs binary rounding,
    so ``1.05`` vs ``1`` passes exactly as ``105`` vs ``100`` does). ``12%`` means 0.12, as in
    ChartQA, so ``12%`` does not match a gold ``12``. A gold of 0 needs a prediction of exactly
    0 (ChartQA falls back to string comparison there). Text answers compare case-insensitively
    after stripping whitespace and a final period.
    """
    pred_text = _normalize_relaxed(prediction).lower()
    pred_number = parse_number(pred_text)
    for answer in _golds(gold):
        target_number = parse_number(answer)
        if pred_number is not None and target_number is not None:
            allowed = RELAXED_TOLERANCE * abs(target_number) * (1 + 1e-9)
            if abs(pred_number - target_number) <= allowed:
                return 1.0
        elif pred_text == _normalize_relaxed(answer).lower():
            return 1.0
    return 0.0


# --------------------------------------------------------------------------- registry


@dataclass(frozen=True)
class MetricSpec:
    """A named per-sample metric and the score at which a judge counts as correct.

    ``prescored_only`` marks metrics benchsmith does not compute (BLEU-4): judge rows for them
    must carry a ``score`` and calling ``fn`` raises. ``tolerance`` is how far below the cutoff
    a score still counts (0 for LIME's legacy verdicts, which compare with a bare ``>=``).
    """

    name: str
    fn: MetricFn
    cutoff: float
    prescored_only: bool = False
    tolerance: float = CUTOFF_TOLERANCE

    def with_cutoff(self, cutoff: float | None) -> MetricSpec:
        """The same metric with another cutoff (``None`` keeps this one)."""
        if cutoff is None:
            return self
        _check_cutoff(cutoff, self.name)
        return MetricSpec(self.name, self.fn, float(cutoff), self.prescored_only, self.tolerance)


def is_correct(score: float, cutoff: float, tolerance: float = CUTOFF_TOLERANCE) -> bool:
    """The LIME comparator: ``score >= cutoff``, forgiving ``tolerance`` of rounding."""
    return score >= cutoff - tolerance


def _check_cutoff(cutoff: float, name: str) -> None:
    if isinstance(cutoff, bool) or not isinstance(cutoff, int | float) or not 0 <= cutoff <= 1:
        raise BenchsmithError(
            f"cutoff for metric {name!r} must be a number in [0, 1], got {cutoff!r}",
            fix="set the cutoff to a score between 0 and 1 (LIME uses 1.0, or 0.6 for VQA)",
        )


METRICS: dict[str, MetricSpec] = {
    spec.name: spec
    for spec in (
        MetricSpec("accuracy", exact_accuracy, 1.0),
        MetricSpec("relaxed_accuracy", relaxed_accuracy, 1.0),
        MetricSpec("anls", anls, 1.0),
        MetricSpec("vqa_accuracy", vqa_accuracy, 0.6),
        MetricSpec("substring_accuracy", substring_accuracy, 1.0),
    )
}
"""Implemented metrics with the paper's Table 8 cutoffs (OCRBench's substring rule is accuracy)."""

ALIASES = {
    "exact_accuracy": "accuracy",
    "acc": "accuracy",
    "relaxed": "relaxed_accuracy",
    "relaxed_overall": "relaxed_accuracy",
    "vqa": "vqa_accuracy",
    "match_score": "vqa_accuracy",
    "contains": "substring_accuracy",
}

PRESCORED_CUTOFFS: dict[str, float] = {"bleu4": 0.2}
"""Table 8 cutoffs of metrics that judge rows must bring as pre-computed scores."""


def _not_computed(name: str) -> MetricFn:
    def fn(prediction: str, gold: Gold) -> float:
        raise BenchsmithError(
            f"metric {name!r} is not computed by benchsmith",
            fix=f'score the predictions with a {name} scorer and write {{"score": ...}} rows',
        )

    return fn


def prescored_metric(name: str, cutoff: float | None = None) -> MetricSpec:
    """A spec for a metric only available as pre-scored rows (``bleu4``: caption subtasks)."""
    if name not in PRESCORED_CUTOFFS and cutoff is None:
        raise BenchsmithError(
            f"no default cutoff for pre-scored metric {name!r}",
            fix=f"give a cutoff, or use one of: {', '.join(sorted(PRESCORED_CUTOFFS))}",
        )
    value = PRESCORED_CUTOFFS.get(name, 0.0) if cutoff is None else cutoff
    _check_cutoff(value, name)
    return MetricSpec(name, _not_computed(name), float(value), prescored_only=True)


def get_metric(name: str) -> MetricSpec:
    """The registered metric called ``name`` (or an alias), with a clear error otherwise."""
    key = ALIASES.get(name, name)
    if key in METRICS:
        return METRICS[key]
    if key in PRESCORED_CUTOFFS:
        raise BenchsmithError(
            f"metric {name!r} is not implemented: caption subtasks need pre-scored judge rows",
            fix=f'write {{"sample_id", "model", "score"}} rows and use prescored_metric({name!r})',
        )
    raise BenchsmithError(
        f"unknown metric {name!r}",
        fix=f"use one of: {', '.join(sorted(METRICS))} (aliases: {', '.join(sorted(ALIASES))})",
    )
