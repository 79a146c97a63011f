"""MULTI-Elite: which questions are the hard 500, as published or re-drawn from judge runs.

``elite_ids`` marks the questions of a plan (``multi.elite.mode``): ``published`` reads the
release's ``hard_list_v*.json`` as is, ``file`` reads a hard list you give (the format is the
release's: a JSON array of question ids, e.g. what ``build multi elite`` writes), ``none``
marks nothing. Listed ids the plan no longer holds (removed as duplicates, or not selected) are
reported, not silently lost.

``reselect_elite`` is the authors' notebook made reproducible (spec section 3): per question a
failure score ``sum over runs of w_m * (1 - points/possible)``, ``w_m`` the run's overall score
(text-only runs skip image questions); ties broken by ``1.5*difficulty + quality``; buckets of
image class x subject with targets ``t = 2*M[class][group]`` (M rows SI 50/15/50, NI 30/10/5,
MI 10/5/10 over school subject / university / society subject); per bucket ``ceil(t/4)`` MA,
``floor(t/4)`` FB and the rest SA, each by failure score; then a **seeded** draw of ``size``
from the candidates, where the original shuffle was unseeded. It is a re-selection from your
runs, not the published list, and is labelled so.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from benchsmith.builders.multi.config import Elite
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import sha256_file

TARGETS = {"SI": (50, 15, 50), "NI": (30, 10, 5), "MI": (10, 5, 10)}


def read_hard_list(path: Path) -> list[str]:
    try:
        ids = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BenchsmithError(f"hard list unreadable: {exc}", path=path,
                              fix="a JSON array of question ids, as the release ships it") from exc  # fmt: skip
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise BenchsmithError("hard list is not a JSON array of question ids", path=path,
                              fix="write [\"czsx_0_0\", ...]")  # fmt: skip
    return ids


def elite_ids(settings: Elite, release_root: Path | None, present: set[str], *, base: Path,
              recorded: list[str] | None = None) -> tuple[set[str], dict[str, Any]]:  # fmt: skip
    """(ids marked Elite, what build_info records about it)."""
    if settings.mode == "none":
        return set(), {"mode": "none"}
    if recorded is not None:
        ids, where = recorded, {}
    elif settings.mode == "published":
        from benchsmith.sources.exams.release import HARD_GLOB, newest

        path = newest(release_root, HARD_GLOB) if release_root else None
        if path is None:
            return set(), {"mode": "published", "file": None, "listed": 0}
        ids, where = read_hard_list(path), {"file": path.name, "sha256": sha256_file(path)}
    else:
        path = Path(settings.hard_list or "")
        path = path if path.is_absolute() else base / path
        if not path.is_file():
            raise BenchsmithError("hard list file missing", path=path,
                                  fix="write it with `benchsmith build multi elite`, or fix "
                                  "multi.elite.hard_list")  # fmt: skip
        ids, where = read_hard_list(path), {"file": str(settings.hard_list),
                                            "sha256": sha256_file(path)}  # fmt: skip
    missing = [i for i in ids if i not in present]
    return {i for i in ids if i in present}, {
        "mode": settings.mode, **where, "listed": len(ids), "ids": list(ids),
        "not_in_plan": missing}  # fmt: skip


def subject_group(subject_code: str) -> tuple[str, int]:
    """(bucket subject, column of TARGETS): school subjects by their pinyin code, university as
    one group, each society exam its own."""
    if subject_code.startswith("dx"):
        return "dx", 1
    if subject_code.startswith("sh"):
        return subject_code[2:], 2
    return subject_code[2:], 0


def failure_scores(rows: list[dict[str, Any]], runs: dict[str, dict[str, tuple[float, float]]],
                   weights: dict[str, float], text_only: set[str]) -> dict[str, float]:  # fmt: skip
    scores = {}
    for row in rows:
        total = 0.0
        for name, results in runs.items():
            if name in text_only and row["num_images"]:
                continue
            points, possible = results.get(row["question_id"], (0.0, 0.0))
            if possible:
                total += weights[name] * (1 - points / possible)
        scores[row["question_id"]] = total
    return scores


def reselect_elite(rows: list[dict[str, Any]], runs: dict[str, dict[str, tuple[float, float]]],
                   weights: dict[str, float], text_only: Iterable[str], size: int,
                   seed: int) -> tuple[list[str], dict[str, Any]]:  # fmt: skip
    """(the drawn ids, a report of buckets and candidates)."""
    objective = [r for r in rows if r["question_type"] in ("SA", "MA", "FB") and r["answer"]]
    failure = failure_scores(objective, runs, weights, set(text_only))
    buckets: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in objective:
        subject, _ = subject_group(row["subject_code"])
        buckets.setdefault((row["image_class"], subject), []).append(row)
    candidates: list[str] = []
    report = {}
    for (image_class, subject), members in sorted(buckets.items()):
        target = 2 * TARGETS[image_class][subject_group(members[0]["subject_code"])[1]]

        def order(row: dict[str, Any]) -> tuple:
            tiebreak = 1.5 * (row["difficulty"] or 0) + (row["quality"] or 0)
            return (-failure[row["question_id"]], -tiebreak, row["question_id"])

        by_type = {t: sorted((r for r in members if r["question_type"] == t), key=order)
                   for t in ("MA", "FB", "SA")}  # fmt: skip
        take_ma = by_type["MA"][: math.ceil(target / 4)]
        take_fb = by_type["FB"][: math.floor(target / 4)]
        take_sa = by_type["SA"][: max(0, target - len(take_ma) - len(take_fb))]
        chosen = [r["question_id"] for r in take_ma + take_fb + take_sa]
        candidates += chosen
        report[f"{image_class}/{subject}"] = {"target": target, "candidates": len(chosen)}
    rng = np.random.default_rng(seed)
    drawn = sorted(candidates)
    if len(drawn) > size:
        picks = rng.choice(len(drawn), size=size, replace=False)
        drawn = sorted(drawn[i] for i in picks)
    return drawn, {"buckets": report, "candidates": len(candidates), "drawn": len(drawn),
                   "seed": seed, "size": size, "runs": sorted(runs), "weights": weights,
                   "text_only": sorted(text_only)}  # fmt: skip
