"""The compiled generator replays NumPy's ``default_rng(SeedSequence(entropy))`` bit for bit.

NumPy does not promise ``Generator`` streams across releases; these tests are what notice if an
upgrade changed them (the canonical MMNeedle plan draws from this replica).
"""

from __future__ import annotations

import numpy as np
import pytest

from benchsmith.builders.mmneedle.rng_kernel import (
    STATE_WORDS,
    entropy_words,
    integers_into,
    next_uint32,
    next_uint64,
    permutation_into,
    seed_state,
)


def _pair(*entropy: int) -> tuple[np.random.Generator, np.ndarray]:
    state = np.empty(STATE_WORDS, dtype=np.uint64)
    seed_state(entropy_words(*entropy), state)
    return np.random.default_rng(np.random.SeedSequence(list(entropy))), state


def _numpy_state(generator: np.random.Generator) -> list[int]:
    bits = generator.bit_generator.state
    state, inc = bits["state"]["state"], bits["state"]["inc"]
    mask = (1 << 64) - 1
    return [state >> 64, state & mask, inc >> 64, inc & mask, bits["has_uint32"], bits["uinteger"]]


@pytest.mark.parametrize(
    "entropy",
    [
        (0, 0, 0, 0),
        (0, 1),
        (7,),
        (2**32 - 1, 2**32, 5, 9),
        (2**70 + 3, 1, 2, 3, 4, 5, 6),
        (123,) * 9,
    ],
)
def test_seeding_matches_numpy_including_long_and_short_entropy(entropy):
    generator, state = _pair(*entropy)
    assert state.tolist() == _numpy_state(generator)


def test_random_seeds_draw_the_same_stream_for_every_call_kind():
    chooser = np.random.default_rng(2026)
    for trial in range(400):
        entropy = [int(v) for v in chooser.integers(0, 2**40, size=chooser.integers(1, 6))]
        generator, state = _pair(*entropy)
        for _ in range(5):
            kind = int(chooser.integers(0, 4))
            if kind == 0:
                n = int(chooser.choice([1, 2, 3, 5, 64, 640, 10_000, 40_504]))
                out = np.empty(n, dtype=np.int64)
                permutation_into(state, n, out)
                assert out.tolist() == generator.permutation(n).tolist(), (trial, entropy, n)
            elif kind == 1:
                high = int(chooser.choice([1, 2, 7, 40_504, 3_000_000_000, 2**32]))
                size = int(chooser.choice([1, 3, 200]))
                out = np.empty(size, dtype=np.int64)
                integers_into(state, high, size, out)
                assert out.tolist() == generator.integers(0, high, size=size).tolist()
            elif kind == 2:
                assert int(next_uint64(state)) == int(generator.bit_generator.random_raw())
            else:
                assert int(next_uint32(state)) == int(generator.integers(0, 2**32, dtype=np.uint32))
            assert state.tolist() == _numpy_state(generator)


def test_odd_half_word_buffer_is_carried_between_calls():
    """A 32-bit draw keeps the other half of its 64-bit output; the next draws must use it."""
    generator, state = _pair(11, 22, 33, 44)
    out = np.empty(3, dtype=np.int64)
    integers_into(state, 40_504, 3, out)  # three 32-bit halves: one half left over
    assert out.tolist() == generator.integers(0, 40_504, size=3).tolist()
    assert state[4] == 1
    permutation_into(state, 6, out := np.empty(6, dtype=np.int64))
    assert out.tolist() == generator.permutation(6).tolist()


def test_negative_entropy_is_refused_like_numpy():
    with pytest.raises(ValueError, match="non-negative"):
        entropy_words(1, -2)
