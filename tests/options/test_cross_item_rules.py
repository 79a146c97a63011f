"""Cross-item baselines: option recurrence, value rules and the learned options-only model."""

from __future__ import annotations

import numpy as np

from benchsmith.options.cross_item_rules import (
    learned_choice_scores,
    pick_by_value,
    recurrence_counts,
    value_rule_scores,
)


def test_recurrence_counts_other_items_only():
    options = [["a", "b", "c"], ["A ", "d", "e"], ["a", "b", "f"]]
    assert recurrence_counts(options) == [[2, 1, 0], [2, 0, 0], [2, 1, 0]]


def test_a_value_rule_fires_only_on_a_unique_extreme():
    assert pick_by_value([1, 3, 2]) == 1 and pick_by_value([1, 3, 2], largest=False) == 0
    assert pick_by_value([3, 3, 1]) is None
    scores, coverage = value_rule_scores([[1, 3, 2], [5, 5, 1]], [1, 0])
    assert scores == [1.0, 1 / 3] and coverage == 0.5


def items(n: int, signal: float, seed: int) -> tuple[list[np.ndarray], list[int]]:
    """Four options with three noise features; the gold's first feature is shifted by
    ``signal`` standard deviations (0: nothing to learn)."""
    rng = np.random.default_rng(seed)
    features, golds = [], []
    for _ in range(n):
        x = rng.normal(size=(4, 3))
        gold = int(rng.integers(4))
        x[gold, 0] += signal
        features.append(x)
        golds.append(gold)
    return features, golds


def test_the_learned_model_finds_a_planted_signal_on_held_out_items():
    features, golds = items(300, 2.0, seed=1)
    accuracy = float(np.mean(learned_choice_scores(features, golds)))
    assert accuracy > 0.6  # chance is 0.25; a 2-sigma shift is easy to learn


def test_the_learned_model_is_at_chance_without_a_signal():
    """Five configs of 400 items with nothing to learn: held-out accuracy is chance (the 99%
    band of 2,000 draws at p = 0.25 is +- 0.025)."""
    scores = [s for seed in range(10, 15) for s in learned_choice_scores(*items(400, 0.0, seed))]
    assert abs(float(np.mean(scores)) - 0.25) < 0.025


def test_the_learned_model_sees_only_differences_within_an_item():
    """A feature constant within every item (the item's own scale) carries no signal."""
    features, golds = items(300, 0.0, seed=3)
    shifted = [x + np.array([100.0 * k, 0, 0]) for k, x in enumerate(features)]
    assert learned_choice_scores(shifted, golds) == learned_choice_scores(features, golds)
    assert learned_choice_scores(features[:5], golds[:5]) == [0.25] * 5  # too few to fold
