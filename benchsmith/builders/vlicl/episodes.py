"""Materialised few-shot episodes: which support rows each query sees, per seed and shot count.

Two samplers (spec §3):

``hashed``
    One generator per query, ``derived_rng(seed, "vlicl", "episodes/<task>/<n_shot>",
    stable_int(query_id))``: an episode depends only on (seed, task, n_shot, query id) and the
    support split, never on which other queries or shot counts are built, nor in what order.
    Operator tasks never show a demo with the query's own ``(a, b)`` (such support rows are
    excluded before drawing).

``legacy``
    Replays the Python ``random`` stream of the original evaluation code (ys-zong/VL-ICL,
    ``I2T_inference.py`` + ``utils/ICL_utils.py:select_demonstration``): ``random.seed(seed)``
    once per model run (``utils.set_random_seed``), then for each shot count in list order and
    each query in file order one ``select_demonstration`` call. Hence an episode depends on
    every earlier query and shot count. Assumes nothing else draws from the global ``random``
    stream in between (true for greedy decoding in the released inference code). Operator
    episodes that show the query's own expression are kept (that is the original) and flagged.

Support and query rows are taken in id order, which is the file order of the original
(ingest ids are file positions; rebuild ids are construction order).
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass
from typing import Any

from benchsmith.builders.vlicl import FAMILY
from benchsmith.builders.vlicl.config import OPERATOR_TASKS
from benchsmith.builders.vlicl.operators import OPERATOR_NAMES
from benchsmith.core.errors import PlanError
from benchsmith.core.hashing import stable_int
from benchsmith.core.rng import derived_rng

# stored 2-way episodes: the same draws (open_mi's branch and the original's T2I branch)
OPEN_TASKS = ("open_mi", "open_t2i_mi", "fast_count_t2i", "fast_attr_t2i")
SAMPLER_VERSIONS = {
    "hashed": "hashed-1",
    "legacy": "legacy-1 (VL-ICL 2b77eee select_demonstration)",
}


@dataclass(frozen=True)
class Demos:
    ids: list[str]
    answers: list[str]
    extras: dict[str, Any]


class SupportPool:
    """The support split of one task in file order, indexed the way the samplers need it."""

    def __init__(self, task: str, support: list[dict[str, Any]]):
        self.task = task
        self.rows = sorted(support, key=lambda r: r["id"])
        self.by_id = {r["id"]: r for r in self.rows}
        self.groups: list[tuple[dict, dict]] = []
        if task == "matching_mi":
            self.groups = _matching_groups(self.rows)

    def __len__(self) -> int:
        return len(self.groups) if self.task == "matching_mi" else len(self.rows)


def _matching_groups(rows: list[dict[str, Any]]) -> list[tuple[dict, dict]]:
    """(same, different) per group in group order: the entries of the original support.json."""
    by_group: dict[int, dict[str, dict]] = {}
    for row in rows:
        by_group.setdefault(row["extras"]["group_id"], {})[row["extras"]["label"]] = row
    groups = []
    for group_id in sorted(by_group):
        pair = by_group[group_id]
        if set(pair) != {"same", "different"}:
            raise PlanError(f"matching_mi support group {group_id} lacks a same or different pair")
        groups.append((pair["same"], pair["different"]))
    return groups


# ---- the per-task demo builders shared by both samplers ------------------------------------


def open_mi_demos(query: dict[str, Any], n_shot: int, distractor: str, query_first: bool) -> Demos:
    """Mirrors the ``open_mi`` branch: shot i takes the i-th stored image of each of the two
    classes, interleaved in ``order_keys`` order (A, B, A, B, ...)."""
    word = query["extras"]["query_word"]
    order = [word, distractor] if query_first else [distractor, word]
    stored = {s["word"]: s["image_ids"] for s in query["extras"]["episode_support"]}
    ids, answers = [], []
    for i in range(n_shot):
        for key in order:
            if i >= len(stored[key]):
                raise PlanError(
                    f"{query['task']} {query['id']}: {n_shot}-shot needs {n_shot} stored images "
                    f"of {key!r}, the episode has {len(stored[key])}",
                    fix=f"lower vlicl.shots.{query['task']} to the episode's shots",
                )
            ids.append(stored[key][i])
            answers.append(key)
    return Demos(ids, answers, {"classes": order, "distractor": distractor})


def _picked_demos(task: str, pool: SupportPool, query: dict[str, Any], picked: list[int]) -> Demos:
    """Demos for the ``random.sample`` branches, given the sampled support positions."""
    if task == "matching_mi":  # each sampled entry contributes its same then its diff pair
        rows = [row for k in picked for row in pool.groups[k]]
        return Demos([r["id"] for r in rows], [r["answer"] for r in rows], {})
    rows = [pool.rows[k] for k in picked]
    if task in OPERATOR_TASKS:  # support['answer'] = support['answer'][operator_idx]
        op = OPERATOR_NAMES[query["extras"]["operator"]]
        expression = (query["extras"]["a"], query["extras"]["b"])
        reveals = any((r["extras"]["a"], r["extras"]["b"]) == expression for r in rows)
        answers = [str(r["extras"]["answers_by_op"][op]) for r in rows]
        return Demos([r["id"] for r in rows], answers, {"reveals_query_expression": reveals})
    return Demos([r["id"] for r in rows], [r["answer"] for r in rows], {})


def scenario_candidates(pool: SupportPool, query: dict[str, Any]) -> list[int]:
    """CoBSAT: the support positions (file order) of the query's scenario, the original's
    filter: the same CoBSAT task, the same latent field and the same value of it."""
    extras = query["extras"]
    latent = extras["latent"]
    return [k for k, row in enumerate(pool.rows)
            if row["extras"]["cobsat_task"] == extras["cobsat_task"]
            and row["extras"]["latent"] == latent
            and row["extras"][latent] == extras[latent]]  # fmt: skip


def _check_enough(task: str, pool: SupportPool, n_shot: int, available: int) -> None:
    if available < n_shot:
        raise PlanError(
            f"{task}: {n_shot}-shot episodes need {n_shot} support items, only {available} "
            f"are available (support split has {len(pool)})",
            fix=f"raise the {task} support size or lower vlicl.shots.{task} in params.yaml",
        )


# ---- hashed ---------------------------------------------------------------------------------


def hashed_demos(
    task: str, pool: SupportPool, query: dict[str, Any], n_shot: int, seed: int
) -> Demos:
    """The order-independent episode of one query."""
    rng = derived_rng(seed, FAMILY, f"episodes/{task}/{n_shot}", stable_int(query["id"]))
    if task in OPEN_TASKS:
        word = query["extras"]["query_word"]
        others = [w for w in query["extras"]["classes"] if w != word]
        distractor = others[int(rng.integers(len(others)))]
        return open_mi_demos(query, n_shot, distractor, bool(rng.integers(2)))
    candidates = scenario_candidates(pool, query) if task == "cobsat" else list(range(len(pool)))
    if task in OPERATOR_TASKS:
        expression = (query["extras"]["a"], query["extras"]["b"])
        candidates = [
            k
            for k in candidates
            if (pool.rows[k]["extras"]["a"], pool.rows[k]["extras"]["b"]) != expression
        ]
    _check_enough(task, pool, n_shot, len(candidates))
    picked = [candidates[int(i)] for i in rng.choice(len(candidates), n_shot, replace=False)]
    return _picked_demos(task, pool, query, picked)


# ---- legacy ---------------------------------------------------------------------------------


def legacy_demos(
    task: str, pool: SupportPool, query: dict[str, Any], n_shot: int, stream: random.Random
) -> Demos:
    """One ``select_demonstration(support_meta, n_shot, dataset, query)`` call.

    * operators: ``random.sample(support_meta, n_shot)``, answers relabelled to the query's
      operator;
    * ``open_mi``: ``random.choice`` of the other class among ``query['classes']`` (list order,
      the query's own word removed), then ``random.choice([True, False])`` for the class order;
      both calls happen even at 0-shot;
    * ``matching_mi``: ``random.sample`` over the support entries (groups), each giving its
      ``same`` then its ``diff`` pair;
    * ``cobsat``: ``random.sample`` over the support entries of the query's scenario (same
      task, latent field and latent value), in file order;
    * ``clevr`` (the default branch): ``random.sample(support_meta, n_shot)``.

    ``random.sample`` only uses the population's length, so sampling ``range(len)`` draws the
    same positions from the same stream; ``k=0`` draws nothing.
    """
    if task in OPEN_TASKS:
        word = query["extras"]["query_word"]
        distractor = stream.choice([w for w in query["extras"]["classes"] if w != word])
        query_first = stream.choice([True, False])
        return open_mi_demos(query, n_shot, distractor, query_first)
    if task == "cobsat":
        candidates = scenario_candidates(pool, query)
        _check_enough(task, pool, n_shot, len(candidates))
        picked = stream.sample(range(len(candidates)), n_shot)
        return _picked_demos(task, pool, query, [candidates[k] for k in picked])
    _check_enough(task, pool, n_shot, len(pool))
    return _picked_demos(task, pool, query, stream.sample(range(len(pool)), n_shot))


def legacy_run(
    task: str, pool: SupportPool, queries: list[dict[str, Any]], shots: tuple[int, ...], seed: int
) -> dict[tuple[int, str], Demos]:
    """Mirrors ``I2T_inference.py``'s main loop for one model: seed once, shots, then queries."""
    stream = random.Random(seed)  # utils.set_random_seed(seed) -> random.seed(seed)
    out: dict[tuple[int, str], Demos] = {}
    for n_shot in shots:  # for shot in args.n_shot
        for query in sorted(
            queries, key=lambda r: r["id"]
        ):  # eval_questions: for query in query_meta
            out[(n_shot, query["id"])] = legacy_demos(task, pool, query, n_shot, stream)
    return out


# ---- all episodes ---------------------------------------------------------------------------


def episode_row(
    task: str, sampler: str, seed: int, n_shot: int, query_id: str, demos: Demos
) -> dict[str, Any]:
    return {
        "task": task,
        "sampler": sampler,
        "seed": seed,
        "n_shot": n_shot,
        "query_id": query_id,
        "demo_ids": demos.ids,
        "demo_answers": demos.answers,
        "extras": demos.extras,
    }


def build_episodes(
    task: str,
    support: list[dict[str, Any]],
    query: list[dict[str, Any]],
    *,
    shots: tuple[int, ...],
    seeds: tuple[int, ...],
    samplers: tuple[str, ...],
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Episode rows sorted (sampler, seed, n_shot, query_id) and a leakage counter per sampler."""
    pool = SupportPool(task, support)
    queries = sorted(query, key=lambda r: r["id"])
    rows: list[dict[str, Any]] = []
    revealing: Counter = Counter()
    for sampler in samplers:
        for seed in seeds:
            if sampler == "legacy":
                demos = legacy_run(task, pool, queries, shots, seed)
            else:
                demos = {
                    (n, q["id"]): hashed_demos(task, pool, q, n, seed)
                    for n in shots
                    for q in queries
                }
            for (n_shot, query_id), demo in demos.items():
                rows.append(episode_row(task, sampler, seed, n_shot, query_id, demo))
                if demo.extras.get("reveals_query_expression"):
                    revealing[sampler] += 1
    rows.sort(key=lambda r: (r["sampler"], r["seed"], r["n_shot"], r["query_id"]))
    stats = {"episodes": len(rows)}
    if task in OPERATOR_TASKS:
        stats["episodes_revealing_query_expression"] = {s: revealing[s] for s in samplers}
    return rows, stats
