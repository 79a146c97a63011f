"""Seeded random generators that depend on *what* is drawn, never on iteration order.

Every random choice in a build takes its own generator derived from
``(seed, family, scope, item)``, so reordering inputs, parallelising, or building a subset
leaves every other draw unchanged (ARCHITECTURE.md contract 1).
"""

from __future__ import annotations

import numpy as np

from benchsmith.core.hashing import stable_int


def derived_rng(seed: int, family: str, scope: str, item: int = 0) -> np.random.Generator:
    """Generator for one item of one scope (e.g. ``("mmneedle", "m10_n2_k1", 17)``)."""
    entropy = [int(seed), stable_int(family), stable_int(scope), int(item)]
    return np.random.default_rng(np.random.SeedSequence(entropy))
