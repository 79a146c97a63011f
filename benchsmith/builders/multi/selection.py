"""The paper's Appendix D selection, on problems, with the choices it leaves open fixed.

Problems are bucketed by their first knowledge piece (no knowledge: the ``""`` bucket). In a
bucket of ``n_k`` problems:

- content score ``L_q = sum over (question, answer, analysis) of w * (a*H(chars) + b*H(images))``
  with ``w = weights`` (1.0, 0.1, 0.5) and ``a = b = 1``; ``H`` compares a count ``L`` with the
  bucket's mean ``Lbar`` of that count: ``harmonic`` ``L*Lbar/(L+Lbar)`` (the paper's first form,
  our default) or ``ratio`` ``2*L*Lbar/(L^2+Lbar^2)`` (its second); ``H = 0`` when ``L`` or
  ``Lbar`` is 0;
- quota ``N_k = ceil(3*log10(n_k))`` (0 for ``n_k = 1``, where rank 0 is still kept);
- sorted by ``L_q`` descending (ties: problem id), rank 0 is always kept, ranks ``1..m`` and the
  last ``m`` are kept with probability ``p``, every other rank with ``p*(N_k - 2m)/n_k``
  (clamped to [0, 1]).

The draws are seeded per bucket (the seed and the bucket key), so adding a problem to one bucket
never changes another bucket's draw. Every dropped problem gets a decision with its bucket,
rank, score and the probability it was kept with.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchsmith.builders.multi.config import Selection
from benchsmith.core.records import decision_record
from benchsmith.sources.exams.release import image_tags

STAGE = "selection"


def normalised(count: float, mean: float, form: str) -> float:
    if count <= 0 or mean <= 0:
        return 0.0
    if form == "harmonic":
        return count * mean / (count + mean)
    return 2 * count * mean / (count * count + mean * mean)


def problem_counts(record: dict[str, Any]) -> tuple[tuple[int, int], tuple[int, int],
                                                     tuple[int, int]]:  # fmt: skip
    """(chars, images) of the question text, the answers and the analyses of one problem."""
    question = (record.get("problem_content") or "") + "".join(record["problem_content_list"])
    answer = "".join(str(a) for a in record.get("problem_answer_list") or [])
    analysis = "".join(str(a) for a in record.get("problem_analysis_list") or [])
    return tuple((len(t), len(set(image_tags(t)))) for t in (question, answer, analysis))  # type: ignore[return-value]


def content_scores(records: Sequence[dict[str, Any]], settings: Selection) -> list[float]:
    counts = [problem_counts(r) for r in records]
    means = [[float(np.mean([c[part][kind] for c in counts])) for kind in (0, 1)]
             for part in range(3)]  # fmt: skip
    scores = []
    for c in counts:
        total = 0.0
        for part, weight in enumerate(settings.weights):
            chars = normalised(c[part][0], means[part][0], settings.h_form)
            images = normalised(c[part][1], means[part][1], settings.h_form)
            total += weight * (settings.a * chars + settings.b * images)
        scores.append(total)
    return scores


def quota(n: int) -> int:
    return math.ceil(3 * math.log10(n)) if n > 0 else 0


def keep_probability(rank: int, n: int, settings: Selection) -> float:
    if rank == 0:
        return 1.0
    m = settings.m
    if rank <= m or rank >= n - m:
        return settings.p
    return min(1.0, max(0.0, settings.p * (quota(n) - 2 * m) / n))


def bucket_rng(seed: int, key: str) -> np.random.Generator:
    digest = hashlib.sha256(f"{seed}\x00{key}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


def select_problems(
    problems: dict[str, dict[str, Any]], settings: Selection, seed: int
) -> tuple[set[str], dict[str, dict[str, Any]], dict[str, Any]]:
    """(kept problem ids, decision per dropped problem, summary) for the given pool."""
    buckets: dict[str, list[str]] = {}
    for problem_id, record in problems.items():
        knowledge = record.get("knowledge") or []
        key = knowledge if isinstance(knowledge, str) else (str(knowledge[0]) if knowledge else "")
        buckets.setdefault(key, []).append(problem_id)
    kept: set[str] = set()
    dropped: dict[str, dict[str, Any]] = {}
    for key in sorted(buckets):
        ids = sorted(buckets[key])
        scores = content_scores([problems[i] for i in ids], settings)
        order = sorted(range(len(ids)), key=lambda k: (-scores[k], ids[k]))
        draws = bucket_rng(seed, key).random(len(ids))
        for rank, k in enumerate(order):
            probability = keep_probability(rank, len(ids), settings)
            if rank == 0 or draws[rank] < probability:
                kept.add(ids[k])
                continue
            dropped[ids[k]] = decision_record(STAGE, "dropped", "NOT_SELECTED", {
                "bucket": key, "bucket_size": len(ids), "quota": quota(len(ids)),
                "rank": rank, "content_score": round(scores[k], 6),
                "keep_probability": round(probability, 6)})  # fmt: skip
    summary = {"pool": len(problems), "buckets": len(buckets), "kept": len(kept),
               "dropped": len(dropped)}  # fmt: skip
    return kept, dropped, summary
