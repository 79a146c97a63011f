"""Difficulty bins from synthetic judges scoring exactly at / just below the cutoff."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.metrics import get_metric
from benchsmith.stages.difficulty_bins import (
    BinEdges,
    DifficultyConfig,
    assign_difficulty,
    resolve_bins,
    summarize_decisions,
)
from benchsmith.stages.judges import read_judge_files, score_judges

MODELS = [f"judge{i}" for i in range(9)]
N_CORRECT = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
PAPER = {0: "zero_pass", 1: "hard", 2: "hard", 3: "middle", 5: "middle", 6: "easy", 9: "easy"}
CODE = {0: "zero_pass", 1: "hard", 2: "hard", 3: "middle", 4: "middle", 5: "easy", 9: "easy"}


def write_judges(tmp_path: Path, skip: set[tuple[str, str]] = frozenset()) -> Path:
    """Sample ``s<k>`` has exactly k judges at the VQA cutoff (0.6) and the rest at 0.59."""
    path = tmp_path / "judges.jsonl"
    rows = []
    for k in N_CORRECT:
        for rank, model in enumerate(MODELS):
            if (f"s{k}", model) not in skip:
                score = 0.6 if rank < k else 0.59
                rows.append({"sample_id": f"s{k}", "model": model, "score": score})
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def scores_for(tmp_path: Path, skip=frozenset()):
    table = read_judge_files([write_judges(tmp_path, skip)])
    ids = {f"s{k}" for k in N_CORRECT}
    return score_judges(table, {}, get_metric("vqa_accuracy"), ids)


SAMPLE_IDS = [f"s{k}" for k in N_CORRECT]


@pytest.mark.parametrize(("preset", "expected"), [("paper", PAPER), ("code", CODE)])
def test_bins_at_boundary_scores(tmp_path, preset, expected):
    decisions = assign_difficulty(scores_for(tmp_path), SAMPLE_IDS, DifficultyConfig(bins=preset))
    for n, difficulty in expected.items():
        decision = decisions[f"s{n}"]
        assert decision.n_correct == n and decision.n_judges == 9
        assert decision.difficulty == difficulty
        dropped = difficulty == "easy"
        assert decision.action == ("drop" if dropped else "keep")
        assert decision.reason == ("EASY" if dropped else None)


def test_n5_is_middle_in_paper_and_easy_in_code(tmp_path):
    scores = scores_for(tmp_path)
    paper = assign_difficulty(scores, ["s5"], DifficultyConfig(bins="paper"))["s5"]
    code = assign_difficulty(scores, ["s5"], DifficultyConfig(bins="code"))["s5"]
    assert (paper.difficulty, code.difficulty) == ("middle", "easy")


def test_cutoff_override_moves_the_boundary(tmp_path):
    scores = scores_for(tmp_path)
    decision = assign_difficulty(scores, ["s0"], DifficultyConfig(metric="vqa", cutoff=0.59))["s0"]
    assert decision.n_correct == 9 and decision.difficulty == "easy"
    assert decision.evidence["cutoff"] == 0.59


def test_evidence_lists_scores_and_correct_models(tmp_path):
    decision = assign_difficulty(scores_for(tmp_path), ["s2"])["s2"]
    assert decision.evidence["correct_models"] == ["judge0", "judge1"]
    assert decision.evidence["scores"]["judge0"] == 0.6
    assert decision.evidence["scores"]["judge8"] == 0.59
    assert decision.evidence["edges"] == {"middle": 3, "easy": 6, "reference_judges": 9}


def test_missing_error_policy_lists_counts_and_examples(tmp_path):
    skip = {("s3", "judge4"), ("s9", "judge4"), ("s1", "judge7")}
    with pytest.raises(BenchsmithError) as info:
        assign_difficulty(scores_for(tmp_path, skip), SAMPLE_IDS)
    text = str(info.value)
    assert "3 missing judge prediction(s) across 2 model(s)" in text
    assert "judge4: 2 (e.g. 's3', 's9')" in text and "judge7: 1" in text
    assert "treat_wrong" in text


def test_treat_wrong_counts_missing_as_incorrect(tmp_path):
    # s6 loses a correct judge (6 -> 5 correct: easy -> middle); s2 loses a wrong one
    skip = {("s6", "judge0"), ("s2", "judge8")}
    config = DifficultyConfig(missing_policy="treat_wrong")
    decisions = assign_difficulty(scores_for(tmp_path, skip), SAMPLE_IDS, config)
    assert decisions["s6"].n_correct == 5 and decisions["s6"].difficulty == "middle"
    assert decisions["s6"].reason == "MISSING_PREDICTION"
    assert decisions["s6"].evidence["missing_models"] == ["judge0"]
    assert decisions["s2"].n_correct == 2 and decisions["s2"].n_judges == 9
    assert decisions["s3"].reason is None and decisions["s3"].evidence["missing_models"] == []


def test_treat_wrong_sample_without_any_judge_is_zero_pass(tmp_path):
    skip = {("s9", model) for model in MODELS}
    config = DifficultyConfig(missing_policy="treat_wrong")
    decision = assign_difficulty(scores_for(tmp_path, skip), SAMPLE_IDS, config)["s9"]
    assert decision.difficulty == "zero_pass" and decision.action == "keep"
    assert decision.reason == "MISSING_PREDICTION"
    assert decision.evidence["missing_models"] == MODELS and decision.evidence["scores"] == {}


def test_exclude_model_drops_judges_and_rescales_bins(tmp_path):
    skip = {("s0", "judge6"), ("s1", "judge7"), ("s2", "judge8")}
    config = DifficultyConfig(missing_policy="exclude_model")
    decisions = assign_difficulty(scores_for(tmp_path, skip), SAMPLE_IDS, config)
    for k in N_CORRECT:
        decision = decisions[f"s{k}"]
        counted = min(k, 6)  # judges 0..5 remain; judge r is correct on s<k> iff r < k
        assert decision.n_judges == 6 and decision.n_correct == counted
        assert decision.evidence["excluded_models"] == ["judge6", "judge7", "judge8"]
        share = Fraction(counted, 6)
        expected = (
            "zero_pass"
            if counted == 0
            else "easy"
            if share >= Fraction(6, 9)
            else "middle"
            if share >= Fraction(3, 9)
            else "hard"
        )
        assert decision.difficulty == expected
    assert decisions["s4"].difficulty == "easy"  # 4 of 6 = 2/3, as 6 of 9


def test_exclude_model_with_every_judge_missing_something_is_an_error(tmp_path):
    skip = {("s0", model) for model in MODELS}
    with pytest.raises(BenchsmithError, match="leaves none"):
        assign_difficulty(
            scores_for(tmp_path, skip), SAMPLE_IDS, DifficultyConfig(missing_policy="exclude_model")
        )


@pytest.mark.parametrize("preset", ["paper", "code"])
def test_rescaled_edges_follow_the_share_rule_for_any_judge_count(preset):
    base = resolve_bins(preset)
    for n_judges in range(1, 25):
        edges = base.for_judges(n_judges)
        for n in range(n_judges + 1):
            share = Fraction(n, n_judges)
            if n == 0:
                expected = "zero_pass"
            elif share >= Fraction(base.easy, 9):
                expected = "easy"
            elif share >= Fraction(base.middle, 9):
                expected = "middle"
            else:
                expected = "hard"
            assert edges.classify(n) == expected, (preset, n_judges, n)


def test_explicit_edges_without_reference_apply_unchanged():
    edges = resolve_bins({"middle": 3, "easy": 6})
    assert edges.for_judges(10) == BinEdges(3, 6, None)
    assert [edges.for_judges(10).classify(n) for n in (2, 5, 6)] == ["hard", "middle", "easy"]
    scaled = resolve_bins({"middle": 2, "easy": 4, "reference_judges": 6})
    assert scaled.for_judges(12).as_dict() == {"middle": 4, "easy": 8, "reference_judges": 12}


@pytest.mark.parametrize(
    "kwargs",
    [
        {"bins": "lenient"},
        {"bins": {"middle": 7, "easy": 3}},
        {"bins": {"middle": 3, "easy": 6, "hard": 1}},
        {"drop_bins": ("trivial",)},
        {"missing_policy": "skip"},
        {"metric": "cider"},
        {"cutoff": 2.0},
    ],
)
def test_config_errors_are_clear(kwargs):
    with pytest.raises(BenchsmithError):
        DifficultyConfig(**kwargs)


def test_drop_bins_and_summary(tmp_path):
    config = DifficultyConfig(drop_bins=["easy", "zero_pass"])
    decisions = assign_difficulty(scores_for(tmp_path), SAMPLE_IDS, config)
    assert decisions["s0"].action == "drop" and decisions["s0"].reason == "ZERO_PASS"
    summary = summarize_decisions(decisions)
    assert summary["bins"] == {"zero_pass": 1, "hard": 2, "middle": 3, "easy": 4}
    assert summary["actions"] == {"keep": 5, "drop": 5}
    assert summary["reasons"] == {"EASY": 4, "ZERO_PASS": 1}


def test_bleu4_config_uses_prescored_cutoff_and_duplicates_are_rejected(tmp_path):
    assert DifficultyConfig(metric="bleu4").metric_spec().cutoff == 0.2
    with pytest.raises(BenchsmithError, match="duplicates"):
        assign_difficulty(scores_for(tmp_path), ["s1", "s1"])
