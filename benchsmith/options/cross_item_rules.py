"""Baselines that look across items: what other items show, and what can be learned from them.

A rule that sees one item at a time misses shortcuts that only show across a config: a gold
option that recurs in other items (the same scene asked twice) while distractors are fresh
jitter; golds rounded to a coarser grid than distractors; a candidate image always the most
like a reference view. Two kinds of baseline here, both over per-option values a caller
computes (text features, or image features such as file size and similarity):

* **value rules** (:func:`pick_by_value`): pick the option with the unique largest (or
  smallest) value; chance when no single option stands out. Option recurrence across the
  *other* items of the config is one such value (:func:`recurrence_counts`).
* **a learned options-only model** (:func:`learned_choice_scores`): the hypothesis-only idea
  for multiple choice. A conditional logit, ``P(option k) = softmax_k(w . x_k)``, over every
  option feature at once, fitted (L2, L-BFGS) on the other folds and scored on the held-out
  one (``folds``-fold cross-validation over items, seeded). Features are centred within each
  item, so only how an option differs from its siblings can matter. A model that beats chance
  on held-out items has found a signal that separates golds from distractors without the skill.

Scores follow :func:`benchsmith.options.blind_rules.rule_baseline`: 1 or 0 per item when the
baseline picks one option, ``1 / n`` (the expected score of a guess) when it does not.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence

import numpy as np

from benchsmith.options.distractors import NUMBER

L2 = 1.0  # ridge penalty of the learned model (features are standardised)


def option_text_features(option: str) -> dict[str, float]:
    """What an option's text shows without its meaning: its length, and the count, size and
    rounding of the numbers in it (``coarse_share``: numbers with at most one decimal, the
    grid golds sat on when distractors were jitter)."""
    numbers = [(float(m.group(0)), len(m.group(1) or "")) for m in NUMBER.finditer(option)]
    values = [abs(v) for v, _ in numbers] or [0.0]
    decimals = [d for _, d in numbers] or [0]
    coarse = [v for v, d in numbers if d <= 1 or round(v * 10) == v * 10]
    return {
        "length": float(len(option)),
        "numbers": float(len(numbers)),
        "mean_abs_number": float(np.mean(values)),
        "max_abs_number": float(max(values)),
        "mean_decimals": float(np.mean(decimals)),
        "coarse_share": len(coarse) / len(numbers) if numbers else 0.0,
    }


def text_features(options: Sequence[Sequence[str]]) -> list[np.ndarray]:
    """Per item, an ``(options, features)`` array: :func:`option_text_features` and how often
    the option recurs in other items."""
    recurrence = recurrence_counts(options)
    out = []
    for item, recurs in zip(options, recurrence, strict=True):
        rows = [[*option_text_features(o).values(), float(r)] for o, r in zip(item, recurs,
                                                                          strict=True)]  # fmt: skip
        out.append(np.array(rows, dtype=np.float64))
    return out


def normalized_option(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def recurrence_counts(options: Sequence[Sequence[str]]) -> list[list[int]]:
    """Per item and option: in how many *other* items the same option text appears."""
    per_item = [{normalized_option(o) for o in item} for item in options]
    seen = Counter(text for texts in per_item for text in texts)
    return [[seen[normalized_option(o)] - 1 for o in item] for item in options]


def pick_by_value(values: Sequence[float], largest: bool = True) -> int | None:
    """The option with the unique extreme value; None when two or more share it."""
    if not len(values):
        return None
    array = np.asarray(values, dtype=np.float64)
    best = array.max() if largest else array.min()
    where = np.flatnonzero(array == best)
    return int(where[0]) if where.size == 1 else None


def value_rule_scores(
    values: Sequence[Sequence[float]], golds: Sequence[int], largest: bool = True
) -> tuple[list[float], float]:
    """(score per item, coverage) of picking each item's unique extreme value."""
    scores, fired = [], 0
    for item_values, gold in zip(values, golds, strict=True):
        picked = pick_by_value(item_values, largest)
        if picked is None:
            scores.append(1 / max(1, len(item_values)))
        else:
            fired += 1
            scores.append(float(picked == gold))
    return scores, fired / len(golds) if golds else 0.0


def _centred(features: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [f - f.mean(axis=0, keepdims=True) for f in features]


def _fit(features: list[np.ndarray], golds: list[int]) -> np.ndarray:
    """The conditional logit's weights (L2, L-BFGS). Items with the same number of options are
    one ``(items, options, features)`` block, so each step of the optimiser is a few array
    operations, not a Python loop over items (the loss is the same sum, in block order)."""
    from scipy.optimize import minimize

    width = features[0].shape[1]
    stacked = np.concatenate(features)
    scale = stacked.std(axis=0)
    scale[scale == 0] = 1.0
    by_count: dict[int, list[int]] = {}
    for i, f in enumerate(features):
        by_count.setdefault(f.shape[0], []).append(i)
    blocks = [
        (np.stack([features[i] / scale for i in items]), np.asarray([golds[i] for i in items]))
        for _, items in sorted(by_count.items())
    ]

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = L2 * 0.5 * float(w @ w), L2 * w
        for x, gold in blocks:
            rows = np.arange(len(gold))
            logits = x @ w
            logits = logits - logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            total -= float(np.log(p[rows, gold] + 1e-300).sum())
            grad = grad + np.einsum("iod,io->d", x, p) - x[rows, gold].sum(axis=0)
        return total, grad

    result = minimize(loss, np.zeros(width), jac=True, method="L-BFGS-B")
    return result.x / scale


def learned_choice_scores(
    features: Sequence[np.ndarray], golds: Sequence[int], *, folds: int = 5, seed: int = 0
) -> list[float]:
    """Held-out score per item of a conditional logit on option features (one
    ``(options, features)`` array per item). Items are dealt to ``folds`` folds by a seeded
    permutation; each fold is scored by a model fitted on the others."""
    n = len(features)
    if n < 2 * folds or not n:
        return [1 / max(1, len(f)) for f in features]
    centred = _centred([np.asarray(f, dtype=np.float64) for f in features])
    fold_of = np.empty(n, dtype=np.int64)
    fold_of[np.random.default_rng(seed).permutation(n)] = np.arange(n) % folds
    scores = [0.0] * n
    for fold in range(folds):
        train = [i for i in range(n) if fold_of[i] != fold]
        w = _fit([centred[i] for i in train], [int(golds[i]) for i in train])
        for i in np.flatnonzero(fold_of == fold).tolist():
            logits = centred[i] @ w
            top = np.flatnonzero(np.isclose(logits, logits.max(), rtol=0, atol=1e-9))
            scores[i] = float(golds[i] in top.tolist()) / len(top)
    return scores
