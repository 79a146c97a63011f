"""Wilson score intervals for a rate seen as ``k`` of ``n``: the shortcut gate's bounds and the
report's error bars use the same ones (the normal interval collapses to a point at 0 or 1,
which is where a blind rule or a strong model sits)."""

from __future__ import annotations

import math


def z_value(confidence: float) -> float:
    """The standard normal quantile (``scipy.stats.norm.ppf`` is this same function; importing
    ``scipy.stats`` costs a second and a half of start-up in every plan and check process)."""
    from scipy.special import ndtri

    return float(ndtri(confidence))


def wilson_upper(accuracy: float, n: int, z: float) -> float:
    """One-sided Wilson upper bound (the interval the card prints is [lower, upper])."""
    if n == 0 or accuracy >= 1.0:
        return 1.0
    centre = accuracy + z * z / (2 * n)
    spread = z * math.sqrt(accuracy * (1 - accuracy) / n + z * z / (4 * n * n))
    return min(1.0, (centre + spread) / (1 + z * z / n))


def wilson_lower(accuracy: float, n: int, z: float) -> float:
    """One-sided Wilson lower bound of a rate observed as ``accuracy`` over ``n`` trials."""
    if n == 0 or accuracy <= 0.0:  # the formula's 0 comes back as 1e-17
        return 0.0
    centre = accuracy + z * z / (2 * n)
    spread = z * math.sqrt(accuracy * (1 - accuracy) / n + z * z / (4 * n * n))
    return max(0.0, (centre - spread) / (1 + z * z / n))


def wilson_interval(correct: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The two-sided Wilson interval at ``confidence`` of ``correct`` out of ``n``."""
    z = z_value(1 - (1 - confidence) / 2)
    accuracy = correct / n if n else 0.0
    return wilson_lower(accuracy, n, z), wilson_upper(accuracy, n, z)
