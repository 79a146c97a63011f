"""Appendix D: quotas, content scores, keep probabilities, seeded per bucket."""

from __future__ import annotations

import json

import numpy as np
import pytest

from benchsmith.builders.multi.config import Selection
from benchsmith.builders.multi.selection import (
    content_scores,
    keep_probability,
    normalised,
    quota,
    select_problems,
)


def problem(text: str, knowledge: str, images: int = 0, answer: str = "A") -> dict:
    tags = "".join(f"[IMAGE_{k}]" for k in range(1, images + 1))
    return {"problem_content": "", "problem_content_list": [text + tags],
            "problem_answer_list": [answer], "problem_analysis_list": [""],
            "knowledge": [knowledge]}  # fmt: skip


def test_quota_and_normalisers():
    assert [quota(n) for n in (1, 2, 10, 100, 1000)] == [0, 1, 3, 6, 9]
    assert normalised(10, 10, "harmonic") == pytest.approx(5.0)
    assert normalised(10, 10, "ratio") == pytest.approx(1.0)
    assert normalised(0, 10, "harmonic") == 0.0 and normalised(5, 0, "ratio") == 0.0


def test_content_score_rewards_text_and_images_by_the_weights():
    records = [problem("短", "k"), problem("长" * 40, "k"), problem("长" * 40, "k", images=2)]
    scores = content_scores(records, Selection())
    assert scores[0] < scores[1] < scores[2]
    analysis_only = content_scores(records, Selection(weights=(0.0, 0.0, 1.0)))
    assert analysis_only == [0.0, 0.0, 0.0]  # no analysis text anywhere


def test_keep_probabilities_per_rank():
    settings = Selection(p=0.5, m=1)
    n = 100  # quota 6
    assert keep_probability(0, n, settings) == 1.0
    assert keep_probability(1, n, settings) == 0.5 and keep_probability(99, n, settings) == 0.5
    assert keep_probability(50, n, settings) == pytest.approx(0.5 * (6 - 2) / 100)


def test_selection_is_seeded_and_buckets_are_independent():
    pool = {f"czsx_{k}": problem("题" * (k % 17 + 1), f"k{k % 3}") for k in range(90)}
    kept, dropped, summary = select_problems(pool, Selection(), seed=7)
    assert kept == select_problems(pool, Selection(), seed=7)[0]
    assert kept != select_problems(pool, Selection(), seed=8)[0]
    assert summary == {"pool": 90, "buckets": 3, "kept": len(kept), "dropped": len(dropped)}
    assert set(dropped).isdisjoint(kept) and len(kept) + len(dropped) == 90
    evidence = json.loads(next(iter(dropped.values()))["evidence"])
    assert evidence["bucket_size"] == 30 and evidence["rank"] > 0
    grown = {**pool, "czsx_999": problem("新", "k0")}
    again, _, _ = select_problems(grown, Selection(), seed=7)
    assert {p for p in kept if pool[p]["knowledge"] != ["k0"]} == {
        p for p in again if p in pool and pool[p]["knowledge"] != ["k0"]}  # fmt: skip


def test_every_bucket_keeps_its_best_problem_and_middle_ranks_at_the_stated_rate():
    pool = {f"p{k:03d}": problem("题" * (k + 1), "same") for k in range(100)}
    rates = np.zeros(100)
    for seed in range(200):
        kept, _, _ = select_problems(pool, Selection(), seed=seed)
        order = sorted(pool, key=lambda p: -len(pool[p]["problem_content_list"][0]))
        assert order[0] in kept  # rank 0: the richest, always
        rates += [p in kept for p in order]
    middle = rates[2:98].mean() / 200
    assert middle == pytest.approx(0.5 * (6 - 2) / 100, abs=0.01)
    assert rates[1] / 200 == pytest.approx(0.5, abs=0.1)
