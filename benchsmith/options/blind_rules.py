"""Blind baselines: how well a config can be answered without the image, or even the question.

No LLM is involved. Two families (the text-only shortcuts of MMIU-style multiple choice):

* **answer prior**: always predict the most frequent answer (open-ended: the normalised answer
  string; multiple choice: the most frequent correct position/letter).
* **option shortcuts**: rules that single out one option by a surface property (longest,
  shortest, only one with another character format, number precision or file type, most words
  shared with the question) and, for numeric options, by value (closest to the identity pose,
  most decimals, nearest to or farthest from the other options, smallest or largest:
  :mod:`.blind_numeric_rules`). A rule predicts its option when exactly one option stands out,
  and guesses at chance otherwise.

For each baseline: ``accuracy`` (expected: items where a rule does not fire count
``1/len(choices)``), ``chance``, ``lift = accuracy - chance``, ``coverage`` (share of items
where the rule fires) and ``flagged = lift > threshold``: such a config can be solved partly
blind and its samples (see :func:`shortcut_hits`) or its answer balance need fixing.
``stderr`` is the binomial standard error ``sqrt(acc (1 - acc) / n)``, for judging whether a
lift near the threshold is noise.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from benchsmith.core.errors import SourceError
from benchsmith.options.blind_numeric_rules import NUMERIC_RULES

_LETTER = re.compile(r"^\(?([A-Za-z])[).:]?$")
_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?:[eE][-+]?\d+)?")
_EXTENSION = re.compile(r"\.([a-z][a-z0-9]{0,4})$")
_WORD = re.compile(r"\w+")
_EXTENSION_ALIASES = {"jpeg": "jpg", "tif": "tiff"}
_STOP_WORDS = frozenset(
    {"a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of"}
    | {"on", "or", "that", "the", "this", "to", "what", "which", "with"}
)


@dataclass(frozen=True)
class BlindItem:
    """One sample as the blind baselines see it (no image)."""

    sample_id: str
    question: str
    answer: str
    choices: list[str] | None = None
    answer_index: int | None = None

    @property
    def is_mcq(self) -> bool:
        return bool(self.choices)


@dataclass(frozen=True)
class BaselineResult:
    name: str
    n: int
    accuracy: float
    chance: float
    lift: float
    coverage: float
    flagged: bool
    stderr: float


# --- answers ------------------------------------------------------------------------------


def normalize_answer(text: str) -> str:
    """NFKC, case-folded, whitespace collapsed: "Yes " and "yes" are the same answer."""
    return " ".join(unicodedata.normalize("NFKC", str(text)).casefold().split())


def resolve_answer_index(answer: object, choices: Sequence[str]) -> int | None:
    """The 0-based index of the correct option, or None when ``answer`` names none.

    In order: an ``int`` is an index; a string equal to exactly one option's text (normalised)
    is that option (checked first, so an option that is itself "B" or "3" wins); a letter label
    "B", "(B)", "B.", "B)" or "B:" is its position. Digit strings are not read as indexes: they
    are ambiguous with numeric options.
    """
    if isinstance(answer, bool):
        return None
    if isinstance(answer, int):
        return answer if 0 <= answer < len(choices) else None
    text = normalize_answer(answer)
    matches = [i for i, choice in enumerate(choices) if normalize_answer(choice) == text]
    if len(matches) == 1:
        return matches[0]
    letter = _LETTER.match(str(answer).strip())
    if letter:
        index = ord(letter.group(1).upper()) - ord("A")
        return index if index < len(choices) else None
    return None


def correct_index(item: BlindItem) -> int:
    """The item's correct option; an answer matching no option is a source error."""
    assert item.choices
    index = item.answer_index
    if index is None or not 0 <= index < len(item.choices):
        index = resolve_answer_index(item.answer, item.choices)
    if index is None:
        raise SourceError(
            f"sample {item.sample_id}: answer {item.answer!r} matches none of its "
            f"{len(item.choices)} options",
            fix="correct the answer (a letter, a 0-based index or one option's exact text)",
        )
    return index


# --- option shortcut rules ----------------------------------------------------------------


def _unique_extreme(values: Sequence[float], pick: Callable[..., float]) -> int | None:
    if len(values) < 2:
        return None
    best = pick(values)
    winners = [i for i, v in enumerate(values) if v == best]
    return winners[0] if len(winners) == 1 else None


def _odd_one_out(values: Sequence[object]) -> int | None:
    """The only option whose value no other option shares (None if zero or several)."""
    if len(values) < 3:
        return None
    counts = Counter(values)
    singles = [i for i, v in enumerate(values) if counts[v] == 1]
    return singles[0] if len(singles) == 1 else None


def longest_option(item: BlindItem) -> int | None:
    """The option with strictly the most characters."""
    return _unique_extreme([len(c.strip()) for c in item.choices or []], max)


def shortest_option(item: BlindItem) -> int | None:
    """The option with strictly the fewest characters."""
    return _unique_extreme([len(c.strip()) for c in item.choices or []], min)


def format_class(text: str) -> str:
    """Coarse character class: numeric (digits, no letters), alpha, mixed, symbol or empty."""
    has_digit = any(ch.isdigit() for ch in text)
    has_alpha = any(ch.isalpha() for ch in text)
    if has_digit and has_alpha:
        return "mixed"
    if has_digit:
        return "numeric"
    if has_alpha:
        return "alpha"
    return "symbol" if text.strip() else "empty"


def unique_format(item: BlindItem) -> int | None:
    """The only option of its format class, e.g. the one number among words."""
    return _odd_one_out([format_class(c) for c in item.choices or []])


def decimal_places(text: str) -> int | None:
    """Decimals of the single number in ``text`` (None unless exactly one number)."""
    numbers = _NUMBER.findall(text)
    if len(numbers) != 1:
        return None
    return len(numbers[0])


def unique_precision(item: BlindItem) -> int | None:
    """The only number written with another count of decimals (all options must be numbers)."""
    places = [decimal_places(c) for c in item.choices or []]
    if any(p is None for p in places):
        return None
    return _odd_one_out(places)


def file_extension(text: str) -> str | None:
    match = _EXTENSION.search(text.strip().lower())
    if not match:
        return None
    return _EXTENSION_ALIASES.get(match.group(1), match.group(1))


def unique_file_type(item: BlindItem) -> int | None:
    """The only option with another file extension (all options must look like file names)."""
    extensions = [file_extension(c) for c in item.choices or []]
    if any(e is None for e in extensions):
        return None
    return _odd_one_out(extensions)


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(normalize_answer(text)) if w not in _STOP_WORDS}


def max_question_overlap(item: BlindItem) -> int | None:
    """The option sharing strictly the most content words with the question (at least one)."""
    question = content_words(item.question)
    overlaps = [len(content_words(c) & question) for c in item.choices or []]
    index = _unique_extreme(overlaps, max)
    return index if index is not None and overlaps[index] > 0 else None


OPTION_RULES: dict[str, Callable[[BlindItem], int | None]] = {
    "longest_option": longest_option,
    "shortest_option": shortest_option,
    "unique_format": unique_format,
    "unique_precision": unique_precision,
    "unique_file_type": unique_file_type,
    "max_question_overlap": max_question_overlap,
    **NUMERIC_RULES,  # poses, boxes, orders: see blind_numeric_rules
}


# --- baselines ----------------------------------------------------------------------------


def _result(
    name: str, scores: Sequence[float], chance: float, coverage: float, threshold: float
) -> BaselineResult:
    n = len(scores)
    accuracy = sum(scores) / n if n else 0.0
    lift = accuracy - chance
    stderr = math.sqrt(accuracy * (1 - accuracy) / n) if n else 0.0
    return BaselineResult(name, n, accuracy, chance, lift, coverage, lift > threshold, stderr)


def _leave_one_out_hits(labels: Sequence[object]) -> list[bool]:
    """Whether the majority label of the *other* items equals each item's own label.

    Ties go to the label seen first, so the prediction never depends on set order.
    """
    counts = Counter(labels)
    first_seen = {label: -i for i, label in reversed(list(enumerate(labels)))}
    ranking = sorted(counts, key=lambda label: (counts[label], first_seen[label]), reverse=True)
    hits = []
    for label in labels:
        others = [other for other in ranking[:2] if other != label]
        if not others:  # every other item has this label (or there is no other item)
            hits.append(len(labels) > 1)
            continue
        rival = others[0]
        own = (counts[label] - 1, first_seen[label])
        hits.append(own > (counts[rival], first_seen[rival]))
    return hits


def answer_prior(
    items: Sequence[BlindItem], config: str = "", *, threshold: float = 0.1
) -> BaselineResult:
    """Most-frequent-answer baseline, evaluated leave-one-out.

    Why leave-one-out: a prior fitted on all items includes the item being predicted, so it
    inflates accuracy on small configs and on rare answers (an answer seen once would "predict"
    itself). Excluding item i from the prior used for item i is the unbiased estimate of what
    the prior learned on *other* data would score. It errs on the pessimistic side for exactly
    balanced labels (5 yes / 5 no: every item sees the other label as majority and scores 0),
    which can only under-flag a config that has no prior to exploit anyway.

    Multiple choice (name ``answer_prior``): the label is the correct position (a predicted
    position an item does not have is simply wrong), chance is ``mean(1 / len(choices))``. Open-ended (name ``answer_prior_open``): the label is the
    normalised answer, and chance is a uniform guess among the config's distinct answers
    (1 / their number): a balanced yes/no config is not flagged, a 70% "yes" one is, and
    free-form answers (almost all distinct) score ~0 against ~0. ``config``, when given, is
    appended to the name as ``[config]``.
    """
    if not items:
        raise ValueError("answer_prior needs at least one item")
    mcq = items[0].is_mcq
    if any(item.is_mcq != mcq for item in items):
        raise ValueError("answer_prior needs all-MCQ or all-open items; split them first")
    name = "answer_prior" if mcq else "answer_prior_open"
    name = f"{name}[{config}]" if config else name
    if mcq:
        hits = _leave_one_out_hits([correct_index(item) for item in items])
        chance = sum(1 / len(item.choices or ()) for item in items) / len(items)
    else:
        answers = [normalize_answer(item.answer) for item in items]
        hits = _leave_one_out_hits(answers)
        chance = 1 / len(set(answers))
    return _result(name, [float(h) for h in hits], chance, 1.0, threshold)


def rule_baseline(
    items: Sequence[BlindItem], rule: Callable[[BlindItem], int | None]
) -> tuple[list[float], float]:
    """(expected score per item, coverage): the rule's option when it fires, else chance."""
    scores, fired = [], 0
    for item in items:
        predicted = rule(item)
        if predicted is None:
            scores.append(1 / len(item.choices or ()))
        else:
            fired += 1
            scores.append(float(predicted == correct_index(item)))
    return scores, fired / len(items) if items else 0.0


CROSS_ITEM_RULES = ("recurring_option", "rare_option", "learned_options_only")


def cross_item_baselines(
    mcq: Sequence[BlindItem], chance: float, threshold: float
) -> list[BaselineResult]:
    """The baselines that look across items (:mod:`.cross_item_rules`): the option seen most
    (or least) often in other items, and a learned options-only model over every option's
    text features and recurrence, each item scored by a model fitted on the other folds."""
    from benchsmith.options.cross_item_rules import (
        learned_choice_scores,
        recurrence_counts,
        text_features,
        value_rule_scores,
    )

    choices = [list(item.choices or ()) for item in mcq]
    golds = [correct_index(item) for item in mcq]
    recurrence = recurrence_counts(choices)
    out = []
    for name, largest in (("recurring_option", True), ("rare_option", False)):
        scores, coverage = value_rule_scores(recurrence, golds, largest)
        out.append(_result(name, scores, chance, coverage, threshold))
    learned = learned_choice_scores(text_features(choices), golds)
    out.append(_result("learned_options_only", learned, chance, 1.0, threshold))
    return out


def run_blind_baselines(
    items: Iterable[BlindItem], *, threshold: float = 0.1
) -> list[BaselineResult]:
    """Every applicable blind baseline of one config, flagged when ``lift > threshold``.

    Multiple-choice items get ``answer_prior``, one result per rule of :data:`OPTION_RULES`
    and the cross-item baselines (:func:`cross_item_baselines`), all against chance
    ``mean(1 / len(choices))``; open-ended items get
    ``answer_prior_open`` (see :func:`answer_prior` for its chance). A config mixing both gets
    both groups, each over its own items. A threshold of 0.1 means "a blind guesser gains more
    than 10 accuracy points over chance"; compare ``lift`` with ``stderr`` on small configs.
    """
    items = list(items)
    mcq = [item for item in items if item.is_mcq]
    open_ended = [item for item in items if not item.is_mcq]
    results = []
    if mcq:
        prior = answer_prior(mcq, threshold=threshold)
        results.append(prior)
        for name, rule in OPTION_RULES.items():
            scores, coverage = rule_baseline(mcq, rule)
            results.append(_result(name, scores, prior.chance, coverage, threshold))
        results.extend(cross_item_baselines(mcq, prior.chance, threshold))
    if open_ended:
        results.append(answer_prior(open_ended, threshold=threshold))
    return results


def flagged_rules(results: Iterable[BaselineResult]) -> list[str]:
    """Names of the flagged option rules (the ones :func:`shortcut_hits` can act on)."""
    return [r.name for r in results if r.flagged and r.name in OPTION_RULES]


def shortcut_hits(
    items: Iterable[BlindItem], rules: Iterable[str] | None = None
) -> dict[str, list[str]]:
    """For each MCQ sample, the rules (of ``rules``, default all) that pick its correct option.

    Only samples with at least one hit are returned, in input order. ``answer_prior`` is not a
    per-sample rule: a skewed answer position is fixed by rebalancing, not by dropping samples.
    """
    names = list(OPTION_RULES) if rules is None else list(rules)
    unknown = [name for name in names if name not in OPTION_RULES]
    if unknown:
        raise ValueError(
            f"unknown shortcut rules {unknown}; known: {sorted(OPTION_RULES)} "
            "(answer_prior is not per-sample: rebalance answer positions instead)"
        )
    hits: dict[str, list[str]] = {}
    for item in items:
        if not item.is_mcq:
            continue
        correct = correct_index(item)
        matched = [name for name in names if OPTION_RULES[name](item) == correct]
        if matched:
            hits[item.sample_id] = matched
    return hits
