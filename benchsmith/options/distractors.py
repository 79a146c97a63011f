"""Distractor generation for multiple-choice items, with guarantees a blind guesser cannot use.

MMIU's released options carry shortcuts: the gold pose is the only near-identity matrix, the
gold image the only ``.jpg``, 3D boxes have negative sizes, options repeat. Every method here
draws distractors *from the gold's own distribution* and formats them exactly like the gold:

- :func:`permutation_distractors`: other orders of the same items (jigsaw answers);
- :func:`number_distractors`: the gold moved by 10-60% (either sign), at its own decimals;
- :func:`pose_distractors`: relative poses whose rotation angle and translation length are
  drawn around the gold's own, so "closest to identity" picks the gold no more than chance;
- :func:`box_distractors`: each box moved by a fraction of its size and rescaled (sizes stay
  positive), kept only when its IoU with the gold's box is below a threshold;
- :func:`label_distractors`: other labels from the config's label pool.

:func:`balanced_positions` places the gold so that every letter is the answer equally often in a
config (counts differ by at most one), and :func:`option_report` checks an assembled config:
gold never among the distractors, options distinct after formatting, one format signature per
item, and the answer-letter chi-square test. Every function takes a seeded ``Generator``, so
the same seed gives the same options.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

MAX_TRIES = 1000


class DistractorError(ValueError):
    """Not enough distinct distractors could be drawn for an item."""


# -- formatting ------------------------------------------------------------------------------


def format_number(value: float, decimals: int) -> str:
    text = f"{value:.{decimals}f}"
    return "0" + text[2:] if text.startswith("-0") and float(text) == 0 else text


def format_vector(values: Sequence[float], decimals: int) -> str:
    return "[" + ", ".join(format_number(v, decimals) for v in values) + "]"


def format_matrix(matrix: np.ndarray, decimals: int) -> str:
    return "[" + ", ".join(format_vector(row, decimals) for row in np.asarray(matrix)) + "]"


IMAGE_EXTENSION = re.compile(r"\.(jpe?g|png|gif|bmp|webp|tiff?)$", re.IGNORECASE)
# a number in any notation the options use: 2, -0.5, 3.1e-05 (group 1: the mantissa's
# decimals, group 2: the exponent)
NUMBER = re.compile(r"[-+]?\d+(?:\.(\d+))?([eE][-+]?\d+)?")


def format_signature(text: str) -> str:
    """The shape of an option: each number becomes its count of decimals (sign and integer
    digits do not matter), each word ``w``, a file extension stays. Options of one item must
    share it: ``[1.250, -0.500]`` and ``[3.000, 0.750]`` -> ``[n.3, n.3]``, while ``2.0`` next to
    ``1.00``, ``3.1e-05`` among plain decimals, or ``x.jpg`` among ``.png`` files, stands out
    to a blind guesser."""
    extension = IMAGE_EXTENSION.search(text)
    body = text[: extension.start()] if extension else text
    body = NUMBER.sub(
        lambda m: (f"n.{len(m.group(1))}" if m.group(1) else "n") + ("e" if m.group(2) else ""),
        body,
    )
    body = re.sub(r"[A-Za-z_]+", "w", body)
    return body + (extension.group(0).lower().replace("jpeg", "jpg") if extension else "")


def _draw(
    make: Callable[[np.random.Generator], Any],
    text: Callable[[Any], str],
    gold: str,
    n: int,
    rng: np.random.Generator,
    accept: Callable[[Any, list[Any]], bool] = lambda value, kept: True,
) -> list[Any]:
    """``n`` values whose text differs from the gold's and from each other's."""
    kept, seen = [], {gold}
    for _ in range(MAX_TRIES):
        if len(kept) == n:
            return kept
        value = make(rng)
        label = text(value)
        if label not in seen and accept(value, kept):
            seen.add(label)
            kept.append(value)
    raise DistractorError(f"only {len(kept)} of {n} distinct distractors for {gold!r}")


# -- methods -----------------------------------------------------------------------------------


def permutation_distractors(
    gold: Sequence[int], n: int, rng: np.random.Generator
) -> list[tuple[int, ...]]:
    """Other orders of the gold's items (as many as exist, up to ``n``)."""
    gold = tuple(gold)
    possible = math.factorial(len(gold)) - 1
    if possible < n:
        raise DistractorError(f"{len(gold)} pieces have only {possible} other orders, need {n}")
    return _draw(lambda r: tuple(int(i) for i in r.permutation(gold)), str, str(gold), n, rng)


def number_distractors(
    gold: float,
    n: int,
    rng: np.random.Generator,
    decimals: int,
    spread: tuple[float, float] = (0.1, 0.6),
) -> list[str]:
    """Numbers drawn like the gold, at its decimals: a hidden centre sits at a random step
    (``U(spread)`` of the gold's size, either sign) from the gold, and each distractor at such
    a step from the centre. The gold is then one more draw around the centre, so the middle
    option, the largest or the smallest is the gold no more often than chance (perturbing the
    gold itself would leave it in the middle of its distractors). Options keep a gap of at least
    ``spread[0] / 2`` of the gold's size (a zero gold counts as size 1)."""
    scale = abs(gold) or 1.0
    gold_text = format_number(gold, decimals)

    def step(r: np.random.Generator) -> float:
        return r.uniform(*spread) * scale * (1 if r.random() < 0.5 else -1)

    centre = gold - step(rng)
    gap = spread[0] / 2 * scale

    def far(value: str, kept: list[str]) -> bool:
        return all(abs(float(value) - float(other)) >= gap for other in [gold_text, *kept])

    return _draw(lambda r: format_number(centre + step(r), decimals), str, gold_text, n, rng, far)


def _rotation(axis: np.ndarray, angle: float) -> np.ndarray:
    axis = axis / np.linalg.norm(axis)
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * (k @ k)


def rotation_angle(rotation: np.ndarray) -> float:
    return math.acos(max(-1.0, min(1.0, (np.trace(rotation[:3, :3]) - 1) / 2)))


def pose_distractors(
    gold: np.ndarray, n: int, rng: np.random.Generator, decimals: int
) -> list[np.ndarray]:
    """Relative poses drawn like the gold (random axis and direction), at its decimals: a
    hidden rotation angle and translation length are the gold's divided by ``U(0.5, 1.5)``,
    and each distractor's are those times ``U(0.5, 1.5)``, so the gold is one more draw of the
    same law: "closest to identity" or "middle-sized motion" picks it at chance."""
    gold = np.asarray(gold, dtype=np.float64)
    angle = max(rotation_angle(gold), 1e-6) / rng.uniform(0.5, 1.5)
    length = max(float(np.linalg.norm(gold[:3, 3])), 10.0**-decimals * 10) / rng.uniform(0.5, 1.5)

    def make(r: np.random.Generator) -> np.ndarray:
        pose = np.eye(4)
        pose[:3, :3] = _rotation(r.normal(size=3), angle * r.uniform(0.5, 1.5))
        direction = r.normal(size=3)
        pose[:3, 3] = direction / np.linalg.norm(direction) * length * r.uniform(0.5, 1.5)
        return pose

    return _draw(
        make, lambda m: format_matrix(m[:3], decimals), format_matrix(gold[:3], decimals), n, rng
    )


def box_iou(a: Sequence[float], b: Sequence[float]) -> float:
    """IoU of two axis-aligned 3D boxes ``[x, y, z, dx, dy, dz]`` (centre and size)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    low = np.maximum(a[:3] - a[3:] / 2, b[:3] - b[3:] / 2)
    high = np.minimum(a[:3] + a[3:] / 2, b[:3] + b[3:] / 2)
    inter = float(np.prod(np.clip(high - low, 0, None)))
    union = float(np.prod(a[3:]) + np.prod(b[3:])) - inter
    return inter / union if union > 0 else 0.0


def _jitter_box(box: np.ndarray, r: np.random.Generator) -> np.ndarray:
    """A box moved by 20-60% of its size per axis (either sign), sizes scaled by 0.6-1.4."""
    shift = box[3:] * r.uniform(0.2, 0.6, 3) * r.choice([-1, 1], 3)
    return np.r_[box[:3] + shift, box[3:] * r.uniform(0.6, 1.4, 3)]


def box_distractors(
    gold: Sequence[Sequence[float]],
    n: int,
    rng: np.random.Generator,
    decimals: int,
    max_iou: float = 0.5,
    keep_bottom: bool = False,
) -> list[list[list[float]]]:
    """Box lists like the gold (same count, sizes positive), at its decimals. Each gold box
    gets a hidden centre box, one jitter away (see :func:`_jitter_box`), and each distractor
    box is a jitter of that centre: the gold is one more draw, so "the box in the middle of the
    others" finds it at chance. An option is kept only when every box has IoU <= ``max_iou``
    with the same box of the gold and of every option kept so far. ``keep_bottom`` keeps every
    box's bottom face at its gold box's height (objects resting on a floor: a distractor box
    floating above it or sunk below it would give the gold away)."""
    boxes = [np.asarray(b, dtype=float) for b in gold]
    if any((b[3:] <= 0).any() for b in boxes):
        raise DistractorError("a gold box has a size <= 0")
    centres = []
    for box in boxes:
        centre = _jitter_box(box, rng)
        centre[3:] = box[3:] / (centre[3:] / box[3:])  # sizes: gold = centre x U(0.6, 1.4)
        centres.append(centre)

    def make(r: np.random.Generator) -> list[list[float]]:
        out = []
        for box, centre in zip(boxes, centres, strict=True):
            moved = _jitter_box(centre, r)
            if keep_bottom:
                moved[2] = box[2] - box[5] / 2 + moved[5] / 2
            out.append([round(float(v), decimals) for v in moved])
        return out

    def far(option: list[list[float]], kept: list[list[list[float]]]) -> bool:
        others = [[list(b) for b in boxes], *kept]
        return all(min(b[3:]) > 0 for b in option) and all(
            box_iou(mine, theirs) <= max_iou
            for other in others
            for mine, theirs in zip(option, other, strict=True)
        )

    text = lambda option: "[" + ", ".join(format_vector(b, decimals) for b in option) + "]"  # noqa: E731
    return _draw(make, text, text([list(b) for b in boxes]), n, rng, far)


def label_distractors(
    gold: str, pool: Sequence[str], n: int, rng: np.random.Generator
) -> list[str]:
    """Other labels of the pool (distinct, never the gold)."""
    others = sorted({p for p in pool if p != gold})
    if len(others) < n:
        raise DistractorError(f"the label pool has {len(others)} labels besides {gold!r}, need {n}")
    return [others[int(i)] for i in rng.choice(len(others), size=n, replace=False)]


# -- assembling and checking ----------------------------------------------------------------


def balanced_positions(n_items: int, n_options: int, rng: np.random.Generator) -> list[int]:
    """The gold's position for each item: every position equally often (counts differ by at
    most one), in a seeded random order."""
    positions = np.resize(np.arange(n_options), n_items)
    return [int(p) for p in rng.permutation(positions)]


@dataclass(frozen=True)
class OptionSet:
    options: list[str]
    answer_index: int
    methods: list[str]  # "gold" or the distractor method, per option

    @property
    def answer(self) -> str:
        return chr(ord("A") + self.answer_index)


def assemble(gold: str, distractors: Sequence[str], position: int, method: str) -> OptionSet:
    options = list(distractors)
    options.insert(position, gold)
    methods = [method] * len(distractors)
    methods.insert(position, "gold")
    return OptionSet(options, position, methods)


def chi_square_p(counts: Sequence[int]) -> float:
    """p-value of the answer-letter counts against a uniform spread (chi-square test): the
    statistic and survival function ``scipy.stats.chisquare`` computes, from ``scipy.special``
    (``scipy.stats`` costs a second and a half of start-up in every process that imports it)."""
    import numpy as np
    from scipy.special import chdtrc

    if sum(counts) == 0 or len(counts) < 2:
        return 1.0
    observed = np.asarray(counts, dtype=np.float64)
    expected = observed.mean()
    statistic = ((observed - expected) ** 2 / expected).sum()
    return float(chdtrc(len(counts) - 1, statistic))


@dataclass
class OptionReport:
    items: int = 0
    gold_among_distractors: int = 0
    duplicate_options: int = 0
    mixed_formats: int = 0
    letters: Counter = field(default_factory=Counter)
    n_options: int = 0

    @property
    def letter_p(self) -> float:
        return chi_square_p([self.letters.get(chr(ord("A") + i), 0) for i in range(self.n_options)])

    def as_dict(self) -> dict[str, Any]:
        return {
            "items": self.items,
            "gold_among_distractors": self.gold_among_distractors,
            "duplicate_options": self.duplicate_options,
            "mixed_formats": self.mixed_formats,
            "answer_letters": dict(sorted(self.letters.items())),
            "answer_letter_chi_square_p": self.letter_p,
        }

    @property
    def ok(self) -> bool:
        return not (self.gold_among_distractors or self.duplicate_options or self.mixed_formats)


def option_report(items: Sequence[OptionSet]) -> OptionReport:
    """The guarantees, counted over a config's items (all zero, and a letter p > 0.01)."""
    report = OptionReport()
    for item in items:
        report.items += 1
        gold = item.options[item.answer_index]
        others = [o for k, o in enumerate(item.options) if k != item.answer_index]
        report.gold_among_distractors += gold in others
        report.duplicate_options += len(set(item.options)) != len(item.options)
        report.mixed_formats += len({format_signature(o) for o in item.options}) != 1
        report.letters[item.answer] += 1
        report.n_options = max(report.n_options, len(item.options))
    return report
