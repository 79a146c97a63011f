"""Blind rules for options that are numbers, vectors or matrices (poses, boxes, orders).

Perturbation distractors leave traces a blind guesser can use: the gold is the only
near-identity pose (MMIU's 3DPE), the one written with more decimals, the option in the middle
of the others (distractors drawn around the gold), or the odd one out (distractors drawn far
from it). Each rule reads every number of every option; it fires only when all options carry
the same count of numbers and exactly one option stands out, and otherwise leaves the item to
chance (see :func:`benchsmith.options.blind_rules.rule_baseline`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from benchsmith.options.distractors import NUMBER, format_signature


def option_numbers(text: str) -> list[float]:
    return [float(m.group(0)) for m in NUMBER.finditer(text)]


def _vectors(choices: Sequence[str] | None) -> np.ndarray | None:
    """Options as rows of one array, or None unless each has the same count (>= 1) of numbers."""
    rows = [option_numbers(c) for c in choices or ()]
    if len(rows) < 2 or not rows[0] or any(len(r) != len(rows[0]) for r in rows):
        return None
    return np.asarray(rows, dtype=np.float64)


def _unique(values: Sequence[float], pick: Callable[..., Any]) -> int | None:
    best = pick(values)
    winners = [i for i, v in enumerate(values) if np.isclose(v, best, rtol=0, atol=1e-12)]
    return winners[0] if len(winners) == 1 else None


def _identity_distance(vectors: np.ndarray) -> list[float] | None:
    """Distance of each 3x4 or 4x4 matrix option from the identity pose (None otherwise)."""
    width = vectors.shape[1]
    if width not in (12, 16):
        return None
    identity = np.eye(4)[: width // 4].reshape(-1)
    return [float(np.linalg.norm(v - identity)) for v in vectors]


def closest_to_identity(item: Any) -> int | None:
    """The pose matrix nearest the identity (the original 3DPE gold stood out this way)."""
    vectors = _vectors(item.choices)
    distances = None if vectors is None else _identity_distance(vectors)
    return None if distances is None else _unique(distances, min)


def farthest_from_identity(item: Any) -> int | None:
    vectors = _vectors(item.choices)
    distances = None if vectors is None else _identity_distance(vectors)
    return None if distances is None else _unique(distances, max)


def most_decimals(item: Any) -> int | None:
    """The option written with the most decimal digits in all (full-precision gold)."""
    counts = [sum(len(m.group(1) or "") for m in NUMBER.finditer(c)) for c in item.choices or ()]
    return _unique(counts, max) if len(counts) > 1 else None


def odd_signature(item: Any) -> int | None:
    """The only option whose shape (numbers' decimals, words, file type) no other shares."""
    signatures = [format_signature(c) for c in item.choices or ()]
    if len(signatures) < 3:
        return None
    singles = [i for i, s in enumerate(signatures) if signatures.count(s) == 1]
    return singles[0] if len(singles) == 1 and len(set(signatures)) == 2 else None


def _spread(vectors: np.ndarray) -> list[float]:
    scale = np.abs(vectors).max(axis=0)
    scale[scale == 0] = 1.0
    scaled = vectors / scale
    return [float(np.abs(scaled - row).sum()) for row in scaled]


def medoid_option(item: Any) -> int | None:
    """The option nearest all the others (distractors drawn around the gold surround it)."""
    vectors = _vectors(item.choices)
    return None if vectors is None or len(vectors) < 3 else _unique(_spread(vectors), min)


def outlier_option(item: Any) -> int | None:
    """The option farthest from all the others."""
    vectors = _vectors(item.choices)
    return None if vectors is None or len(vectors) < 3 else _unique(_spread(vectors), max)


def smallest_magnitude(item: Any) -> int | None:
    vectors = _vectors(item.choices)
    return None if vectors is None else _unique(list(np.linalg.norm(vectors, axis=1)), min)


def largest_magnitude(item: Any) -> int | None:
    vectors = _vectors(item.choices)
    return None if vectors is None else _unique(list(np.linalg.norm(vectors, axis=1)), max)


NUMERIC_RULES: dict[str, Callable[[Any], int | None]] = {
    "closest_to_identity": closest_to_identity,
    "farthest_from_identity": farthest_from_identity,
    "most_decimals": most_decimals,
    "odd_signature": odd_signature,
    "medoid_option": medoid_option,
    "outlier_option": outlier_option,
    "smallest_magnitude": smallest_magnitude,
    "largest_magnitude": largest_magnitude,
}
