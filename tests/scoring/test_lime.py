"""LIME overall scores: the published LLaVA-1.6-7B reference, micro vs macro, captions apart."""

from __future__ import annotations

import pytest

from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.lime import (
    LIME_SIZES,
    SubtaskScore,
    lime_overall,
    score_subtask,
)

# spec §5: LLaVA-1.6-vicuna-7B, early per-subtask row (OCR is the /1000 version, as published)
LLAVA16_ROW = {
    "pope": 41.1,
    "textvqa": 39.0,
    "ok_vqa": 12.5,
    "chartqa": 43.08,
    "infovqa": 22.67,
    "ai2d": 27.1,
    "scienceqa": 47.33,
    "ocrbench": 10.9,
}
LLAVA16_CAPTIONS = {"coco_caption": 76.05, "textcaps": 48.35}


def llava_scores(with_captions: bool = True) -> list[SubtaskScore]:
    row = dict(LLAVA16_ROW, **(LLAVA16_CAPTIONS if with_captions else {}))
    return [SubtaskScore(name, LIME_SIZES[name], value) for name, value in row.items()]


def test_reference_macro_by_domain_reproduces_published_overall():
    result = lime_overall(llava_scores())
    assert result["overall_macro_by_domain"] == pytest.approx(28.48, abs=0.01)


def test_micro_overall_is_sample_weighted_mean_over_7003_samples():
    result = lime_overall(llava_scores())
    by_hand = (
        443 * 41.1
        + 1200 * 39.0
        + 1200 * 12.5
        + 1200 * 43.08
        + 1200 * 22.67
        + 1000 * 27.1
        + 300 * 47.33
        + 460 * 10.9
    ) / 7003
    assert result["n_samples"] == 7003
    assert result["overall"] == pytest.approx(by_hand, abs=1e-9)
    assert result["overall"] != pytest.approx(result["overall_macro_by_domain"], abs=0.01)


def test_captions_never_enter_the_overall():
    with_captions = lime_overall(llava_scores(with_captions=True))
    without = lime_overall(llava_scores(with_captions=False))
    assert with_captions["overall"] == without["overall"]
    assert with_captions["overall_macro_by_domain"] == without["overall_macro_by_domain"]
    assert with_captions["captions"] == {
        "coco_caption": {"n": 1200, "score": 76.05},
        "textcaps": {"n": 1200, "score": 48.35},
    }
    assert "coco_caption" not in with_captions["subtasks"]
    assert "captioning" not in with_captions["domains"]


def test_domains_group_subtasks_as_in_the_paper():
    domains = lime_overall(llava_scores())["domains"]
    assert sorted(domains) == ["infographic", "normal_vqa", "ocr", "science", "tf_reasoning"]
    assert domains["science"]["subtasks"] == ["ai2d", "scienceqa"]
    assert domains["science"]["score"] == pytest.approx((1000 * 27.1 + 300 * 47.33) / 1300)


def test_domain_mapping_is_configurable_and_unmapped_subtasks_stand_alone():
    scores = [SubtaskScore("a", 10, 1.0), SubtaskScore("b", 30, 0.0), SubtaskScore("c", 10, 0.5)]
    merged = lime_overall(scores, domains={"a": "x", "b": "x"})
    assert merged["overall"] == pytest.approx(15 / 50)
    assert set(merged["domains"]) == {"x", "c"}
    assert merged["overall_macro_by_domain"] == pytest.approx((10 / 40 + 0.5) / 2)


def test_custom_caption_set_is_reported_apart():
    scores = [SubtaskScore("qa", 10, 0.4), SubtaskScore("cap", 10, 90.0)]
    result = lime_overall(scores, caption_subtasks=frozenset({"cap"}))
    assert result["overall"] == pytest.approx(0.4)
    assert result["captions"] == {"cap": {"n": 10, "score": 90.0}}


def test_bad_score_lists_are_rejected():
    with pytest.raises(BenchsmithError, match="twice"):
        lime_overall([SubtaskScore("pope", 1, 1.0), SubtaskScore("pope", 1, 0.0)])
    with pytest.raises(BenchsmithError, match="non-caption"):
        lime_overall([SubtaskScore("coco_caption", 10, 80.0)])
    with pytest.raises(BenchsmithError, match="sample count"):
        lime_overall([SubtaskScore("pope", -1, 1.0)])


def test_ocrbench_is_divided_by_the_subset_size_not_1000():
    rows = [("The text says HELLO", "hello")] * 50 + [("nothing", "hello")] * 410
    score = score_subtask(rows, "substring_accuracy", subtask="ocrbench")
    assert score == SubtaskScore("ocrbench", 460, 50 / 460)
    assert score.score != pytest.approx(50 / 1000)


def test_score_subtask_averages_the_per_sample_metric():
    answers = ["cat"] * 3 + ["dog"] * 7
    rows = [("cat", answers), ("dog", answers), ("bird", answers)]
    score = score_subtask(rows, "vqa_accuracy")
    assert score.n == 3 and score.subtask == "vqa_accuracy"
    assert score.score == pytest.approx((0.9 + 1.0 + 0.0) / 3)


def test_score_subtask_needs_rows_and_a_known_metric():
    with pytest.raises(BenchsmithError, match="no predictions"):
        score_subtask([], "accuracy")
    with pytest.raises(BenchsmithError, match="unknown metric"):
        score_subtask([("a", "a")], "cider")
