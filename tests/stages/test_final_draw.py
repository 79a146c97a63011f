"""Largest-remainder allocation and the seeded, order-independent stratified draw."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest

from benchsmith.core.errors import BenchsmithError
from benchsmith.stages.final_draw import (
    largest_remainder_allocation,
    plan_allocations,
    stratified_draw,
)


def make_pool(sizes: dict[str, dict[str, int]]) -> dict[str, dict[str, list[str]]]:
    return {
        subtask: {
            stratum: [f"{subtask}-{stratum}-{i}" for i in range(n)] for stratum, n in strata.items()
        }
        for subtask, strata in sizes.items()
    }


def shuffled(pool: dict[str, dict[str, list[str]]], seed: int) -> dict[str, dict[str, list[str]]]:
    rng = random.Random(seed)
    out = {}
    for subtask in rng.sample(list(pool), len(pool)):
        strata = {}
        for stratum in rng.sample(list(pool[subtask]), len(pool[subtask])):
            strata[stratum] = rng.sample(pool[subtask][stratum], len(pool[subtask][stratum]))
        out[subtask] = strata
    return out


SIZES = {
    "textvqa": {"hard": 900, "middle": 713, "zero_pass": 41},
    "pope": {"hard": 200, "middle": 243},
    "ai2d": {"hard": 1001, "middle": 500, "zero_pass": 3},
}


def test_allocation_small_worked_example():
    assert largest_remainder_allocation({"hard": 700, "middle": 300}, 100) == {
        "hard": 70,
        "middle": 30,
    }
    # quotas 1.5 / 1.5 / 0: one seat left, tie broken by name
    assert largest_remainder_allocation({"b": 1, "a": 1, "c": 0}, 1) == {"a": 1, "b": 0, "c": 0}


def test_allocation_properties_on_random_counts():
    rng = random.Random(7)
    for _ in range(500):
        counts = {f"s{i}": rng.randint(0, 60) for i in range(rng.randint(1, 5))}
        total = sum(counts.values())
        target = rng.randint(0, total + 10)
        allocation = largest_remainder_allocation(counts, target)
        assert set(allocation) == set(counts)
        assert sum(allocation.values()) == min(target, total)
        for name, count in counts.items():
            assert 0 <= allocation[name] <= count
            if target < total:
                quota = Fraction(target * count, total)
                assert abs(allocation[name] - quota) < 1


def test_allocation_rejects_bad_counts():
    with pytest.raises(BenchsmithError):
        largest_remainder_allocation({"a": -1}, 3)
    with pytest.raises(BenchsmithError):
        largest_remainder_allocation({"a": 3}, -2)


def test_same_seed_and_shuffled_input_give_identical_ids():
    pool = make_pool(SIZES)
    first = stratified_draw(pool, 1200, seed=13)
    assert stratified_draw(pool, 1200, seed=13) == first
    for reshuffle in range(3):
        assert stratified_draw(shuffled(pool, reshuffle), 1200, seed=13) == first
    assert stratified_draw(pool, 1200, seed=14) != first


def test_totals_are_exact_and_shares_proportional():
    pool = make_pool(SIZES)
    selected = stratified_draw(pool, {"textvqa": 1200, "pope": 1200, "ai2d": 1000}, seed=0)
    for subtask, strata in pool.items():
        total = sum(len(ids) for ids in strata.values())
        target = {"textvqa": 1200, "pope": 1200, "ai2d": 1000}[subtask]
        chosen = {s: len(selected & set(ids)) for s, ids in strata.items()}
        assert sum(chosen.values()) == min(target, total)
        for stratum, ids in strata.items():
            if target < total:
                assert abs(chosen[stratum] - Fraction(target * len(ids), total)) <= 1


def test_pool_below_target_keeps_everything():
    pool = make_pool({"pope": {"hard": 200, "middle": 243}, "scienceqa": {"hard": 10}})
    selected = stratified_draw(pool, 1200, seed=5)
    assert selected == {i for strata in pool.values() for ids in strata.values() for i in ids}


def test_a_stratum_draw_does_not_depend_on_its_neighbours():
    pool = make_pool({"t": {"hard": 300, "middle": 300}})
    neighbour = make_pool({"t": {"hard": 300, "middle": 900}})
    assert plan_allocations(pool, 100) == {"t": {"hard": 50, "middle": 50}}
    assert plan_allocations(neighbour, 200) == {"t": {"hard": 50, "middle": 150}}
    hard_before = {i for i in stratified_draw(pool, 100, seed=1) if "-hard-" in i}
    hard_after = {i for i in stratified_draw(neighbour, 200, seed=1) if "-hard-" in i}
    assert len(hard_before) == 50 and hard_after == hard_before


def test_bad_pools_and_targets_are_clear_errors():
    pool = make_pool({"a": {"hard": 3}})
    pool["a"]["middle"] = ["a-hard-0"]
    with pytest.raises(BenchsmithError, match="a/hard and a/middle"):
        stratified_draw(pool, 2, seed=0)
    with pytest.raises(BenchsmithError, match="no draw target"):
        stratified_draw(make_pool({"a": {"hard": 3}}), {"b": 2}, seed=0)
