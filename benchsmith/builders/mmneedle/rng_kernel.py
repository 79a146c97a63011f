"""NumPy's ``default_rng(SeedSequence(entropy))`` stream, compiled, for planners' inner loops.

Why: a plan draws from its own generator per sample (:func:`benchsmith.core.rng.derived_rng`),
and a full MMNeedle plan makes 210,000 of them. Creating one NumPy ``Generator`` costs ~45 us
and a ``permutation(10_000)`` ~100-200 us of mostly call overhead, so the plan spent most of a
minute in the generator's Python surface. Moving the whole per-sample loop into numba needs the
*same numbers* inside the loop, so this module re-implements, bit for bit, the few pieces of
NumPy's generator the planners use:

* ``SeedSequence(entropy)`` with the default pool of four 32-bit words, and its
  ``generate_state(4, uint64)`` (the hash-mix constants of NumPy's ``bit_generator.pyx``);
* PCG64 seeded from it (PCG XSL-RR 128/64, 128-bit state as two uint64 halves), with NumPy's
  buffered 32-bit draws (the high half of a 64-bit output is kept for the next call);
* ``Generator.permutation(n)`` / ``shuffle`` (Fisher-Yates from the end, masked rejection on
  32- or 64-bit draws) and ``Generator.integers(0, n, size)`` for ``n <= 2**32`` (Lemire's
  multiply-shift with rejection on 32-bit draws).

The match is checked against the installed NumPy on thousands of seeds and every call kind in
``tests/builders/mmneedle/test_rng_kernel.py``; NumPy does not promise ``Generator`` streams across releases,
so that test is what tells us if a NumPy upgrade changed them (our plans would change too).

A generator's state is a ``uint64`` array of six words: ``[state_hi, state_lo, inc_hi, inc_lo,
has_uint32, uinteger]``, the fields of NumPy's ``PCG64.state``.
"""

from __future__ import annotations

import numba
import numpy as np
from llvmlite import ir
from numba.core import types
from numba.extending import intrinsic

from benchsmith.core.jit import ready_numba

ready_numba()  # before the first kernel: see benchsmith.core.jit

_M32 = np.uint64(0xFFFFFFFF)
_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_S16 = np.uint64(16)
_S32 = np.uint64(32)

# SeedSequence's hash-mix constants (bit_generator.pyx)
_INIT_A = np.uint64(0x43B0D7E5)
_MULT_A = np.uint64(0x931E8875)
_INIT_B = np.uint64(0x8B51F9DD)
_MULT_B = np.uint64(0x58F38DED)
_MIX_MULT_L = np.uint64(0xCA01F9DD)
_MIX_MULT_R = np.uint64(0x4973F715)
_POOL_SIZE = 4

# PCG's default 128-bit multiplier, as (high, low) halves
_MULT_HI = np.uint64(2549297995355413924)
_MULT_LO = np.uint64(4865540595714422341)

STATE_WORDS = 6


def entropy_words(*values: int) -> np.ndarray:
    """The 32-bit words SeedSequence assembles from non-negative ints (little-endian, 0 -> [0])."""
    words: list[int] = []
    for value in values:
        value = int(value)
        if value < 0:
            raise ValueError(f"SeedSequence entropy must be non-negative, got {value}")
        if value == 0:
            words.append(0)
        while value:
            words.append(value & 0xFFFFFFFF)
            value >>= 32
    return np.asarray(words, dtype=np.uint64)


@numba.njit(cache=True, nogil=True, inline="always")
def _hashmix(value, hash_const):
    value = (value ^ hash_const[0]) & _M32
    hash_const[0] = (hash_const[0] * _MULT_A) & _M32
    value = (value * hash_const[0]) & _M32
    return value ^ (value >> _S16)


@numba.njit(cache=True, nogil=True, inline="always")
def _mix(x, y):
    result = (_MIX_MULT_L * x - _MIX_MULT_R * y) & _M32
    return result ^ (result >> _S16)


@intrinsic
def _mul_high(typingctx, a, b):
    """High 64 bits of the 128-bit product of two uint64 values (one ``mul`` on x86-64 and
    arm64; numba has no 128-bit integer type, so the product is written in LLVM IR)."""
    signature = types.uint64(types.uint64, types.uint64)

    def codegen(context, builder, sig, args):
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))

    return signature, codegen


@numba.njit(cache=True, nogil=True, inline="always")
def _advance(hi, lo, inc_hi, inc_lo):
    """(hi, lo) * MULT + inc (mod 2**128): one PCG step on a state held in locals."""
    product_lo = lo * _MULT_LO
    product_hi = _mul_high(lo, _MULT_LO) + lo * _MULT_HI + hi * _MULT_LO
    new_lo = product_lo + inc_lo
    carry = _ONE if new_lo < product_lo else _ZERO
    return product_hi + inc_hi + carry, new_lo


@numba.njit(cache=True, nogil=True, inline="always")
def _output(hi, lo):
    """PCG's XSL-RR output of a 128-bit state."""
    rot = hi >> np.uint64(58)
    xored = hi ^ lo
    return (xored >> rot) | (xored << ((np.uint64(64) - rot) & np.uint64(63)))


@numba.njit(cache=True, nogil=True, inline="always")
def _step(state):
    state[0], state[1] = _advance(state[0], state[1], state[2], state[3])


@numba.njit(cache=True, nogil=True)
def seed_state(words, state) -> None:
    """Fill ``state`` as ``PCG64(SeedSequence(entropy))`` does; ``words`` from :func:`entropy_words`."""
    hash_const = np.empty(1, np.uint64)
    hash_const[0] = _INIT_A
    pool = np.empty(_POOL_SIZE, np.uint64)
    for i in range(_POOL_SIZE):
        pool[i] = _hashmix(words[i] if i < words.size else _ZERO, hash_const)
    for src in range(_POOL_SIZE):
        for dst in range(_POOL_SIZE):
            if src != dst:
                pool[dst] = _mix(pool[dst], _hashmix(pool[src], hash_const))
    for src in range(_POOL_SIZE, words.size):
        for dst in range(_POOL_SIZE):
            pool[dst] = _mix(pool[dst], _hashmix(words[src], hash_const))
    # generate_state(4, uint64): eight 32-bit words, paired little-endian into four uint64
    out_hash = _INIT_B
    halves = np.empty(8, np.uint64)
    for i in range(8):
        value = (pool[i % _POOL_SIZE] ^ out_hash) & _M32
        out_hash = (out_hash * _MULT_B) & _M32
        value = (value * out_hash) & _M32
        halves[i] = value ^ (value >> _S16)
    seed_hi = halves[0] | (halves[1] << _S32)
    seed_lo = halves[2] | (halves[3] << _S32)
    seq_hi = halves[4] | (halves[5] << _S32)
    seq_lo = halves[6] | (halves[7] << _S32)
    # pcg64_srandom_r: inc = initseq << 1 | 1; state = 0; step; state += initstate; step
    state[0] = _ZERO
    state[1] = _ZERO
    state[2] = (seq_hi << _ONE) | (seq_lo >> np.uint64(63))
    state[3] = (seq_lo << _ONE) | _ONE
    _step(state)
    lo = state[1] + seed_lo
    carry = _ONE if lo < state[1] else _ZERO
    state[0] = state[0] + seed_hi + carry
    state[1] = lo
    _step(state)
    state[4] = _ZERO
    state[5] = _ZERO


@numba.njit(cache=True, nogil=True, inline="always")
def next_uint64(state):
    _step(state)
    return _output(state[0], state[1])


@numba.njit(cache=True, nogil=True, inline="always")
def next_uint32(state):
    if state[4] != _ZERO:
        state[4] = _ZERO
        return state[5]
    value = next_uint64(state)
    state[4] = _ONE
    state[5] = value >> _S32
    return value & _M32


@numba.njit(cache=True, nogil=True)
def random_interval(state, maximum: np.uint64) -> np.uint64:
    """Uniform in [0, maximum] by masked rejection (NumPy's ``random_interval``)."""
    if maximum == _ZERO:
        return _ZERO
    mask = maximum
    for shift in (1, 2, 4, 8, 16, 32):
        mask |= mask >> np.uint64(shift)
    if maximum <= _M32:
        while True:
            value = next_uint32(state) & mask
            if value <= maximum:
                return value
    while True:
        value = next_uint64(state) & mask
        if value <= maximum:
            return value


@numba.njit(cache=True, nogil=True, inline="always")
def _shuffle_step(out, i, mask, value):
    """One 32-bit draw of Fisher-Yates at position ``i``: accepted when ``value & mask <= i``
    (then swap ``i`` with it and move to ``i - 1``), rejected otherwise (swap ``i`` with itself).
    Written without branches on the draw: a rejection is a coin flip the CPU cannot predict."""
    value &= mask
    accepted = value <= np.uint64(i)
    j = np.int64(value) if accepted else i
    held = out[i]
    out[i] = out[j]
    out[j] = held
    i -= 1 if accepted else 0
    if mask >> _ONE >= np.uint64(i):  # the mask shrinks with i, one bit at a time
        mask >>= _ONE
    return i, mask


@numba.njit(cache=True, nogil=True)
def permutation_into(state, n: int, out) -> None:
    """``out[:n]`` = ``Generator.permutation(n)`` (``out`` an int64 array of >= n entries).

    NumPy's shuffle swaps position ``i`` (from ``n - 1`` down) with ``random_interval(i)``, a
    masked 32-bit draw retried until it is ``<= i``. The draws come in a fixed order (low half
    of each 64-bit output, then its high half), so the loop below walks the halves in that
    order and lets each accept or reject by data, not by a branch. The generator is held in
    locals throughout; a permutation of 10,000 is most of a canonical MMNeedle sample's cost.
    """
    for i in range(n):
        out[i] = i
    if n < 2:
        return
    if n - 1 > 0xFFFFFFFF:  # 64-bit draws: rare enough to take the plain path
        for i in range(n - 1, 0, -1):
            j = np.int64(random_interval(state, np.uint64(i)))
            out[i], out[j] = out[j], out[i]
        return
    hi, lo, inc_hi, inc_lo = state[0], state[1], state[2], state[3]
    i = n - 1
    mask = np.uint64(i)
    for shift in (1, 2, 4, 8, 16, 32):
        mask |= mask >> np.uint64(shift)
    half = state[5]  # NumPy keeps the last high half here even once it is used
    if state[4] != _ZERO:  # the high half left over by an earlier 32-bit draw comes first
        state[4] = _ZERO
        i, mask = _shuffle_step(out, i, mask, half)
    while i > 0:
        hi, lo = _advance(hi, lo, inc_hi, inc_lo)
        drawn = _output(hi, lo)
        half = drawn >> _S32
        i, mask = _shuffle_step(out, i, mask, drawn & _M32)
        if i == 0:
            state[4] = _ONE
            break
        i, mask = _shuffle_step(out, i, mask, half)
    state[0], state[1], state[5] = hi, lo, half


@numba.njit(cache=True, nogil=True)
def integers_into(state, high: int, size: int, out) -> None:
    """``out[:size]`` = ``Generator.integers(0, high, size=size)`` for ``1 <= high <= 2**32``."""
    span = np.uint64(high - 1)
    if span == _ZERO:
        for i in range(size):
            out[i] = 0
        return
    if span == _M32:
        for i in range(size):
            out[i] = np.int64(next_uint32(state))
        return
    exclusive = span + _ONE
    threshold = (_M32 - span) % exclusive
    for i in range(size):
        product = next_uint32(state) * exclusive
        leftover = product & _M32
        if leftover < exclusive:
            while leftover < threshold:
                product = next_uint32(state) * exclusive
                leftover = product & _M32
        out[i] = np.int64(product >> _S32)
