"""Exact near-duplicate pairs: prefix-filter candidates and compiled intersection counts give
every pair at the threshold, checked against brute force on exam-like texts."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from benchsmith.builders.multi.config import NearDuplicates
from benchsmith.builders.multi.exact_pairs import (
    exact_similar_pairs,
    prefix_candidates,
    prefix_lengths,
)
from benchsmith.builders.multi.near_dups import find_duplicate_pairs, gram_sets, jaccard

TEMPLATES = (
    "下列说法正确的是",
    "已知函数f(x)=",
    "如图所示，求",
    "A. 正确 B. 错误 C. 不确定 D. 以上都对",
)
CHARS = [chr(c) for c in range(0x4E00, 0x4E00 + 400)]


def exam_texts(n: int, seed: int) -> list[str]:
    """Short questions that share templates and options (common grams), with copies edited by
    a few characters, so pairs sit on both sides of 0.6."""
    rng = np.random.default_rng(seed)
    texts = []
    for k in range(n):
        if k and rng.random() < 0.4:
            chars = list(texts[int(rng.integers(len(texts)))])
            for _ in range(int(rng.integers(0, 8))):  # 0: an exact copy
                chars[int(rng.integers(len(chars)))] = str(rng.choice(CHARS))
            texts.append("".join(chars))
        else:
            body = "".join(rng.choice(CHARS, size=int(rng.integers(4, 30))))
            texts.append(str(rng.choice(TEMPLATES)) + body + str(rng.choice(TEMPLATES)))
    return texts


def brute_force(sets: list[np.ndarray], threshold: float) -> set[tuple[int, int]]:
    return {
        (i, j)
        for i, j in itertools.combinations(range(len(sets)), 2)
        if sets[i].size and sets[j].size and jaccard(sets[i], sets[j]) >= threshold
    }


@pytest.mark.parametrize("threshold", [0.3, 0.5, 0.6, 0.8, 1.0])
def test_every_pair_at_the_threshold_is_found_and_no_other(threshold):
    sets = gram_sets(exam_texts(300, seed=int(threshold * 10)), 3)
    pairs, similarity, checked = exact_similar_pairs(sets, threshold)
    truth = brute_force(sets, threshold)
    assert set(map(tuple, pairs.tolist())) == truth and truth
    assert checked < len(sets) * (len(sets) - 1) // 2  # the prefixes pruned most pairs
    for (i, j), value in zip(pairs.tolist(), similarity.tolist(), strict=True):
        assert value == jaccard(sets[i], sets[j])


def test_a_pair_at_exactly_the_threshold_is_found():
    """Jaccard exactly 0.6 (3 of 5 grams): the float product 0.6 * 5 = 3.0000000000000004
    must not shorten the prefix (the LSH route missed such a pair in the bench)."""
    a, b = np.array([1, 2, 3, 4], dtype=np.uint64), np.array([1, 2, 3, 5], dtype=np.uint64)
    assert jaccard(a, b) == 0.6 and prefix_lengths(np.array([5]), 0.6).tolist() == [3]
    pairs, similarity, _ = exact_similar_pairs([a, b, np.array([9], dtype=np.uint64)], 0.6)
    assert pairs.tolist() == [[0, 1]] and similarity.tolist() == [0.6]


def test_empty_sets_meet_nothing_and_a_zero_threshold_is_refused():
    empty = np.zeros(0, dtype=np.uint64)
    assert prefix_candidates([empty, empty, np.array([1], dtype=np.uint64)], 0.5).size == 0
    with pytest.raises(ValueError, match="threshold"):
        prefix_candidates([empty], 0.0)


def test_the_pipeline_finds_what_lsh_finds_and_what_it_misses():
    texts = exam_texts(400, seed=3)
    rows = [{"text": t, "question_content": t, "problem_content": "", "options": None,
             "problem_id": str(k), "answer": ""} for k, t in enumerate(texts)]  # fmt: skip
    images = [[]] * len(rows)
    exact, _ = find_duplicate_pairs(rows, images, NearDuplicates())
    lsh, _ = find_duplicate_pairs(rows, images, NearDuplicates(candidates="lsh"))
    found = {(p.left, p.right) for p in exact}
    assert found == brute_force(gram_sets(texts, 3), 0.6)
    assert {(p.left, p.right) for p in lsh} <= found  # LSH may miss, never adds


def test_a_zero_min_jaccard_is_refused_naming_the_key():
    from benchsmith.core.errors import BenchsmithError

    with pytest.raises(BenchsmithError, match="multi.near_duplicates.min_jaccard"):
        NearDuplicates(min_jaccard=0.0)
