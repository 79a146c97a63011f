"""Wilson intervals: the shortcut gate's bounds and the report's error bars."""

from __future__ import annotations

import pytest

from benchsmith.core.intervals import wilson_interval


def test_the_textbook_values():
    # Wilson (1927) at 95%: 8 of 10 -> [0.4902, 0.9433]; 0 of 10 -> [0, 0.2775]
    assert wilson_interval(8, 10) == pytest.approx((0.49016, 0.94332), abs=1e-4)
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.27753), abs=1e-4)


def test_it_is_symmetric_and_stays_inside_zero_one():
    for n in (1, 7, 50):
        for k in range(n + 1):
            low, high = wilson_interval(k, n)
            assert 0.0 <= low <= k / n <= high <= 1.0
            mirror = wilson_interval(n - k, n)
            assert (low, high) == pytest.approx((1 - mirror[1], 1 - mirror[0]))
    assert wilson_interval(0, 0) == (0.0, 1.0)  # no trial: nothing known
    assert wilson_interval(30, 100, 0.99)[0] < wilson_interval(30, 100, 0.95)[0]
