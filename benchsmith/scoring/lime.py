"""LIME subtask scores and the overall score (spec ``lime.md`` §4).

A subtask's score is the mean of its per-sample metric over the subtask's samples
(:func:`score_subtask`). The original OCRBench code divides the number correct by 1000 even for
the 460-sample LIME subset (spec §6 flaw 7), capping OCR at 46%; here every subtask, OCRBench
included, is divided by its own number of samples.

Two overall scores are published in LIME's history, and :func:`lime_overall` returns both:

``overall`` (README leaderboard, LIME v3)
    Sample-weighted mean over the non-caption subtasks:
    ``sum_s n_s * score_s / sum_s n_s``. With the LIME sizes that is 7,003 samples; it
    reproduces GPT-4o 52.63 and InternVL-2-40B 66.85.

``overall_macro_by_domain`` (early ``corelation_result.xlsx``)
    Unweighted mean over the non-caption *domains*, where each domain's score is the
    sample-weighted mean of its subtasks: ``mean_d (sum_{s in d} n_s score_s / sum_{s in d} n_s)``.
    It reproduces LLaVA-1.6-7B = 28.48.

Captioning is left out of both, as the paper recommends (CIDEr tracks human preference poorly
and is not on a 0-1 scale); caption subtasks are reported separately under ``captions``.
Scores are averaged on whatever scale they arrive in (0-1 or percent), so use one scale.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.metrics import Gold, get_metric

CAPTION_SUBTASKS = frozenset({"coco_caption", "textcaps"})

LIME_DOMAINS: dict[str, str] = {
    "pope": "tf_reasoning",
    "ok_vqa": "normal_vqa",
    "textvqa": "normal_vqa",
    "infovqa": "infographic",
    "chartqa": "infographic",
    "scienceqa": "science",
    "ai2d": "science",
    "ocrbench": "ocr",
    "coco_caption": "captioning",
    "textcaps": "captioning",
}
"""The paper's domains (T/F reasoning, Normal VQA, Infographic QA, Science QA, OCR, Captioning)."""

LIME_SIZES: dict[str, int] = {
    "textcaps": 1200,
    "coco_caption": 1200,
    "pope": 443,
    "ok_vqa": 1200,
    "textvqa": 1200,
    "infovqa": 1200,
    "chartqa": 1200,
    "scienceqa": 300,
    "ai2d": 1000,
    "ocrbench": 460,
}
"""Published LIME subset sizes (spec §1); 7,003 samples outside captioning."""


@dataclass(frozen=True)
class SubtaskScore:
    """One subtask's score and the number of samples it was averaged over."""

    subtask: str
    n: int
    score: float


def score_subtask(
    rows: Iterable[tuple[str, Gold]], metric_name: str, subtask: str | None = None
) -> SubtaskScore:
    """Mean per-sample metric over ``(prediction, gold)`` pairs.

    The mean divides by the number of rows, never by a fixed benchmark size, which fixes the
    OCRBench /1000 bug. ``subtask`` defaults to the metric name. Scores are on a 0-1 scale.
    """
    metric = get_metric(metric_name)
    values = [metric.fn(prediction, gold) for prediction, gold in rows]
    if not values:
        raise BenchsmithError(
            f"no predictions to score for subtask {subtask or metric_name!r}",
            fix="pass at least one (prediction, gold) pair",
        )
    return SubtaskScore(subtask or metric_name, len(values), sum(values) / len(values))


def _weighted_mean(scores: Sequence[SubtaskScore]) -> float | None:
    total = sum(s.n for s in scores)
    if total == 0:
        return None
    return sum(s.n * s.score for s in scores) / total


def _check_scores(scores: Sequence[SubtaskScore]) -> None:
    seen: set[str] = set()
    for score in scores:
        if score.subtask in seen:
            raise BenchsmithError(
                f"subtask {score.subtask!r} is listed twice",
                fix="pass one SubtaskScore per subtask",
            )
        seen.add(score.subtask)
        if isinstance(score.n, bool) or not isinstance(score.n, int) or score.n < 0:
            raise BenchsmithError(
                f"subtask {score.subtask!r} has an invalid sample count {score.n!r}",
                fix="n must be the number of samples the score was averaged over",
            )


def lime_overall(
    scores: Sequence[SubtaskScore],
    caption_subtasks: frozenset[str] = CAPTION_SUBTASKS,
    domains: Mapping[str, str] | None = None,
) -> dict:
    """Both LIME overall scores, per-domain and per-subtask detail, and captions on their own.

    ``domains`` maps subtask -> domain for the macro variant (default :data:`LIME_DOMAINS`); a
    non-caption subtask it does not name forms a domain of its own (listed under ``domains``).
    Subtasks with ``n == 0`` contribute nothing to either mean.
    """
    _check_scores(scores)
    domain_of = LIME_DOMAINS if domains is None else domains
    counted = [s for s in scores if s.subtask not in caption_subtasks]
    overall = _weighted_mean(counted)
    if overall is None:
        raise BenchsmithError(
            "no non-caption subtask with samples: the LIME overall score is undefined",
            fix="pass scores for the question-answering subtasks (captions are reported apart)",
        )
    grouped: dict[str, list[SubtaskScore]] = {}
    for score in counted:
        grouped.setdefault(domain_of.get(score.subtask, score.subtask), []).append(score)
    domain_detail = {}
    for name in sorted(grouped):
        members = grouped[name]
        mean = _weighted_mean(members)
        if mean is not None:
            domain_detail[name] = {
                "score": mean,
                "n": sum(s.n for s in members),
                "subtasks": sorted(s.subtask for s in members),
            }
    macro = sum(d["score"] for d in domain_detail.values()) / len(domain_detail)
    return {
        "overall": overall,
        "overall_macro_by_domain": macro,
        "n_samples": sum(s.n for s in counted),
        "domains": domain_detail,
        "captions": {
            s.subtask: {"n": s.n, "score": s.score}
            for s in sorted(scores, key=lambda s: s.subtask)
            if s.subtask in caption_subtasks
        },
        "subtasks": {
            s.subtask: {"n": s.n, "score": s.score}
            for s in sorted(counted, key=lambda s: s.subtask)
        },
    }
