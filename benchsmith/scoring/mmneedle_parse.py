"""Answer extraction for MMNeedle responses.

The prompt asks for ``index, row, column`` per caption (``; ``-separated for K>1) or ``-1`` when
no subimage matches. The original ``evaluate.py`` compared normalised strings, so ``1,2,3``,
``(1, 2, 3)`` or ``Answer: 1, 2, 3`` all scored as wrong even though the model located the needle
(spec §4). :func:`parse_answer` is the lenient policy benchsmith reports by default; it only
removes formatting, never guesses: prose, a wrong number of needles or a two-number location
stays ``unparsed`` and is scored as wrong. :func:`strict_normalize` and
:func:`strict_absent_forms` reproduce the original string matching for ``--strict``.

Lenient policy, in order:

1. ``None``, empty or whitespace-only -> ``missing``.
2. Peel formatting until nothing changes: surrounding whitespace, markdown code fences/ticks and
   bold markers, a leading ``Answer:`` / ``Answer -`` / ``Answer is`` label, surrounding quotes,
   leading/trailing periods.
3. An answer made only of ``-1`` tokens (``-1``, ``-1; -1``, ``-1, -1``, ``-1-1``,
   ``-1, -1, -1; -1, -1, -1``) with 1, K or 3K of them means every needle is absent (the paper
   accepts a single ``-1`` for a K-needle sample).
4. Otherwise split needles on ``;`` (or on newlines when there is no ``;``); there must be
   exactly K. Each needle, after peeling and removing enclosing brackets, is ``-1`` (absent) or
   three integers separated by commas and/or spaces. ``-1, -1, -1`` is also absent; any other
   negative number is ``unparsed``.
5. When 2-4 find no answer, the response is read as prose: every run of well-formed needles
   (comma-separated integer triples, optionally bracketed, or ``-1``, joined by ``;``) that is
   not part of a longer list of numbers is a candidate. Exactly one distinct candidate with K
   needles (or a single ``-1``) is the answer (``"The answer is 10, 1, 1."``,
   ``"10, 1, 1\nBecause ..."``); none, or two different ones, stays ``unparsed``.
6. Else, locations written out with their labels, ``image 1, row 2, column 3`` (``col``,
   ``image 1 row 2 col 3``), K of them and nothing else numbered, are the answer. A location is
   never pieced together from loose numbers or guessed between two.

Before step 2 the response is read as every scorer reads replies
(:func:`benchsmith.options.option_letters.read_reply`): full-width digits folded,
``<think>...</think>`` blocks and chat prefixes (``Assistant:``) dropped, ``\\boxed{}`` and
other LaTeX wrappers unwrapped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from benchsmith.options.option_letters import read_reply

Location = tuple[int, int, int]
"""A 1-based ``(image_index, row, col)``, as in the prompt and the published ``needles``."""

Status = Literal["missing", "unparsed", "ok"]

_FENCE = re.compile(r"```[A-Za-z]*")
_LABEL = re.compile(r"^answers?\b(?:\s*:|\s+-\s+|\s*[–—]\s*|\s+is\b\s*:?)?\s*", re.IGNORECASE)
_QUOTES = "\"'“”‘’"
_ALL_ABSENT = re.compile(r"-1(?:[\s,;]*-1)*")
_INT = re.compile(r"-?\d+")
_BRACKETS = {"(": ")", "[": "]", "{": "}", "<": ">"}
_PROSE_NEEDLE = r"(?:[(\[]\s*)?\d+\s*,\s*\d+\s*,\s*\d+(?:\s*[)\]])?|-1(?:\s*,\s*-1\s*,\s*-1)?"
_PROSE_RUN = re.compile(rf"(?:{_PROSE_NEEDLE})(?:\s*;\s*(?:{_PROSE_NEEDLE}))*")
_JOINED_BEFORE = re.compile(r"(?:[\w.\-]|,\s*)$")
_JOINED_AFTER = re.compile(r"\s*,\s*-?\d|\.\d|\w|-\d")
_LABELLED = re.compile(
    r"image\s*#?\s*(\d+)\s*[,;:]?\s*(?:and\s+)?row\s*(\d+)\s*[,;:]?\s*(?:and\s+)?"
    r"col(?:umn)?\s*(\d+)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ParsedAnswer:
    """What a response says, needle by needle.

    ``locations`` has exactly K entries when ``status == "ok"`` (``None`` = the model answered
    ``-1`` for that needle) and is empty otherwise.
    """

    status: Status
    locations: list[Location | None] = field(default_factory=list)

    @property
    def all_absent(self) -> bool:
        """True when the model says no needle is in the haystack."""
        return self.status == "ok" and all(loc is None for loc in self.locations)


class _Unparsable(ValueError):
    """A needle that is neither ``-1`` nor a three-integer location."""


def _peel(text: str) -> str:
    """Remove formatting that carries no answer, repeating until stable (order varies)."""
    previous = None
    text = _FENCE.sub("", text)
    while text != previous:
        previous = text
        text = text.replace("**", "").replace("__", "").replace("`", "").strip()
        text = _LABEL.sub("", text, count=1)
        text = text.strip().strip(_QUOTES).strip().strip(".")
    return text


def _unbracket(text: str) -> str:
    """Drop enclosing ``(...)``, ``[...]``, ``{...}`` or ``<...>`` pairs."""
    while len(text) >= 2 and _BRACKETS.get(text[0]) == text[-1]:
        text = text[1:-1].strip()
    return text


def _parse_needle(part: str) -> Location | None:
    """One needle: ``None`` for absent, a location, or :class:`_Unparsable`."""
    # the brackets around one needle, or around the whole answer ("(2, 1, 3; 4, 1, 1)": the
    # first needle keeps the opening one, the last the closing one)
    text = _unbracket(_peel(part)).strip("()[]{}<> \t")
    if text == "-1":
        return None
    tokens = [tok for tok in re.split(r"[\s,]+", text) if tok]
    if len(tokens) != 3 or not all(_INT.fullmatch(tok) for tok in tokens):
        raise _Unparsable(part)
    index, row, col = (int(tok) for tok in tokens)
    if (index, row, col) == (-1, -1, -1):
        return None
    if min(index, row, col) < 0:
        raise _Unparsable(part)
    return (index, row, col)


def _split_needles(text: str) -> list[str]:
    """Split on ``;`` when present (newlines inside a needle become spaces), else on newlines."""
    parts = text.replace("\n", " ").split(";") if ";" in text else text.splitlines()
    return [part.strip() for part in parts if part.strip()]


def _prose_candidates(text: str, num_needles: int) -> set[tuple[Location | None, ...]]:
    """Distinct well-formed answers standing on their own in ``text`` (step 5)."""
    found: set[tuple[Location | None, ...]] = set()
    for match in _PROSE_RUN.finditer(text):
        before, after = text[: match.start()], text[match.end() :]
        if _JOINED_BEFORE.search(before) or _JOINED_AFTER.match(after):
            continue  # part of a longer list, a decimal or a word: not an answer of its own
        try:
            needles = [_parse_needle(part) for part in match.group().split(";")]
        except _Unparsable:
            continue
        if len(needles) == 1 and needles[0] is None:
            needles = needles * num_needles
        if len(needles) == num_needles:
            found.add(tuple(needles))
    return found


def parse_answer(text: str | None, num_needles: int) -> ParsedAnswer:
    """Parse one response under the lenient policy in the module docstring."""
    if num_needles < 1:
        raise ValueError(f"num_needles must be >= 1, got {num_needles}")
    if text is None or not text.strip():
        return ParsedAnswer("missing")
    text = read_reply(text) or text
    parsed = _parse_formatted(text, num_needles)
    if parsed.status == "ok":
        return parsed
    candidates = _prose_candidates(_FENCE.sub("", text).replace("**", ""), num_needles)
    if len(candidates) == 1:
        return ParsedAnswer("ok", list(candidates.pop()))
    labelled = _labelled(text, num_needles)
    return labelled if labelled is not None else parsed


def _labelled(text: str, num_needles: int) -> ParsedAnswer | None:
    """Step 6: K locations written with their labels, and no other number left over."""
    found = list(_LABELLED.finditer(text))
    if len(found) != num_needles:
        return None
    rest = _LABELLED.sub(" ", text)
    if re.search(r"\d", rest):
        return None  # another number besides the labelled ones: not one clear answer
    return ParsedAnswer("ok", [tuple(int(g) for g in m.groups()) for m in found])


def _parse_formatted(text: str, num_needles: int) -> ParsedAnswer:
    """Steps 2-4: the whole response, once formatting is peeled, is the answer."""
    cleaned = _peel(text)
    if _ALL_ABSENT.fullmatch(cleaned) and cleaned.count("-1") in {1, num_needles, 3 * num_needles}:
        return ParsedAnswer("ok", [None] * num_needles)
    parts = _split_needles(cleaned)
    if len(parts) != num_needles:
        return ParsedAnswer("unparsed")
    try:
        return ParsedAnswer("ok", [_parse_needle(part) for part in parts])
    except _Unparsable:
        return ParsedAnswer("unparsed")


def strict_normalize(text: str) -> str:
    """The original ``evaluate.py`` clean-up: drop every newline, strip spaces, dots, spaces."""
    return text.replace("\n", "").strip().strip(".").strip()


def strict_absent_forms(num_needles: int) -> frozenset[str]:
    """The normalised strings the original evaluators read as "no needle here".

    ``evaluate.py`` (K=1) accepts only ``-1``; ``evaluate_multi.py`` also accepts ``-1; -1…``,
    ``-1, -1…``, ``-1, -1, -1; -1, -1, -1…`` and ``-1-1…`` with one entry per needle.
    """
    if num_needles == 1:
        return frozenset({"-1"})
    rest = num_needles - 1
    return frozenset(
        {
            "-1",
            "-1" + "; -1" * rest,
            "-1" + ", -1" * rest,
            "-1, -1, -1" + "; -1, -1, -1" * rest,
            "-1" * num_needles,
        }
    )
