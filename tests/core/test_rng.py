"""derived_rng: a generator depends on (seed, family, scope, item) only, never on call order."""

from __future__ import annotations

import numpy as np
import pytest

from benchsmith.core.rng import derived_rng

BASE = (0, "mmneedle", "m10_n2_k1", 17)


def stream(seed: int, family: str, scope: str, item: int = 0) -> np.ndarray:
    return derived_rng(seed, family, scope, item).integers(0, 2**62, size=32)


def test_equal_inputs_give_equal_streams() -> None:
    np.testing.assert_array_equal(stream(*BASE), stream(*BASE))


def test_stream_unaffected_by_other_draws_in_between() -> None:
    first = stream(*BASE)
    for item in range(5):
        derived_rng(0, "mmneedle", "m10_n2_k1", item).random(100)
    np.random.default_rng(123).random(10)
    np.testing.assert_array_equal(stream(*BASE), first)


def test_item_defaults_to_zero() -> None:
    np.testing.assert_array_equal(
        derived_rng(3, "fam", "scope").random(8), derived_rng(3, "fam", "scope", 0).random(8)
    )


@pytest.mark.parametrize(
    "other",
    [
        (1, "mmneedle", "m10_n2_k1", 17),
        (0, "mmneedle2", "m10_n2_k1", 17),
        (0, "mmneedle", "m10_n2_k2", 17),
        (0, "mmneedle", "m10_n2_k1", 18),
        (0, "m10_n2_k1", "mmneedle", 17),  # family and scope swapped
    ],
    ids=["seed", "family", "scope", "item", "swapped"],
)
def test_any_changed_part_gives_a_different_stream(other: tuple) -> None:
    assert not np.array_equal(stream(*other), stream(*BASE))


def test_many_items_give_distinct_streams() -> None:
    firsts = {int(stream(0, "fam", "scope", item)[0]) for item in range(500)}
    assert len(firsts) == 500
