"""Episode samplers: legacy replays the original call stream, hashed is order-independent."""

from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest

from benchsmith.builders.vlicl import ImageHashes
from benchsmith.builders.vlicl.clevr_count import build_clevr
from benchsmith.builders.vlicl.config import NONSENSE_WORDS
from benchsmith.builders.vlicl.episodes import build_episodes
from benchsmith.builders.vlicl.matching_mi import build_matching_mi
from benchsmith.builders.vlicl.open_mi import build_open_mi
from benchsmith.builders.vlicl.operator_images import load_operator_font
from benchsmith.builders.vlicl.operators import build_operator_task
from benchsmith.core.errors import PlanError
from benchsmith.sources.clevr.reader import read_clevr_scenes
from benchsmith.sources.clevr.sample import write_sample_clevr
from benchsmith.sources.miniimagenet.reader import read_miniimagenet
from benchsmith.sources.miniimagenet.sample import write_sample_miniimagenet

SHOTS = {"open_mi": (0, 1, 2, 4, 5), "matching_mi": (0, 1, 2, 4, 5), "clevr": (0, 1, 2, 4, 8)}
OPERATOR_INDEX = {"+": 0, "-": 1, "x": 2}


@pytest.fixture(scope="module")
def pools(tmp_path_factory):
    """Support/query rows of every task from the sample sources (built once per module)."""
    tmp = tmp_path_factory.mktemp("episodes")
    mini = read_miniimagenet(write_sample_miniimagenet(tmp / "mini", images_per_class=12))
    clevr = write_sample_clevr(tmp / "clevr", n_train=30, n_val=10)
    hashes = ImageHashes()
    font, info = load_operator_font()
    out = {
        "open_mi": build_open_mi(
            mini, episodes=10, ways=5, shots=5, words=NONSENSE_WORDS, seed=0, hashes=hashes
        ),
        "matching_mi": build_matching_mi(
            mini, support_pairs=20, query_pairs=10, seed=0, hashes=hashes
        ),
        "clevr": build_clevr(
            read_clevr_scenes(clevr, "train"),
            read_clevr_scenes(clevr, "val"),
            n_support=30,
            n_query=10,
            seed=0,
            root=clevr,
            hashes=hashes,
            scenes_sha256={"train": "", "val": ""},
        ),
    }
    for task, n_support in (("operator_induction", 80), ("operator_induction_interleaved", 95)):
        out[task] = build_operator_task(
            task,
            n_support=n_support,
            n_query_per_operator=20,
            seed=0,
            font=font,
            font_source=info.source,
            rendered_dir=tmp / "rendered",
        )
    return out


def _shots(task: str) -> tuple[int, ...]:
    return SHOTS.get(task, (0, 1, 2, 4, 8))


def _episodes(rows, task, sampler, shots=None, seeds=(0, 1, 2), query=None, support=None):
    found, _ = build_episodes(
        task,
        rows.support if support is None else support,
        rows.query if query is None else query,
        shots=shots or _shots(task),
        seeds=seeds,
        samplers=(sampler,),
    )
    return {(e["seed"], e["n_shot"], e["query_id"]): e for e in found}


# ---- an independent simulation of the original evaluation loop -----------------------------


def _original_format(task: str, rows) -> tuple[list[dict], list[dict]]:
    """The task's rows as the original support.json / query.json entries (ids kept)."""
    if task == "open_mi":
        query_meta = [
            {
                "id": q["id"],
                "answer": q["answer"],
                "classes": q["extras"]["classes"],
                "support": {
                    s["word"]: {"images": s["image_ids"]} for s in q["extras"]["episode_support"]
                },
            }
            for q in rows.query
        ]
        return query_meta, []
    if task == "matching_mi":
        by_group: dict[int, dict] = {}
        for r in rows.support:
            key = "same" if r["extras"]["label"] == "same" else "diff"
            by_group.setdefault(r["extras"]["group_id"], {})[key] = {
                "id": r["id"],
                "answer": r["answer"],
            }
        support_meta = [by_group[g] for g in sorted(by_group)]
    elif task.startswith("operator"):
        support_meta = [
            {"id": r["id"], "answer": list(r["extras"]["answers_by_op"].values())}
            for r in rows.support
        ]
    else:
        support_meta = [{"id": r["id"], "answer": r["answer"]} for r in rows.support]
    query_meta = [{"id": q["id"], "operator": q["extras"].get("operator")} for q in rows.query]
    return query_meta, support_meta


def _original_select(support_meta, n_shot, dataset, query):
    """select_demonstration as the original evaluation code calls the global random module."""
    if "operator_induction" in dataset:
        demos = copy.deepcopy(random.sample(support_meta, n_shot))
        for demo in demos:
            demo["answer"] = demo["answer"][OPERATOR_INDEX[query["operator"]]]
        return demos
    if dataset == "open_mi":
        own = query["answer"]
        other = random.choice([c for c in query["classes"] if c != own])
        keys = [own, other] if random.choice([True, False]) else [other, own]
        return [
            {"id": query["support"][k]["images"][i], "answer": k}
            for i in range(n_shot)
            for k in keys
        ]
    if dataset == "matching_mi":
        raw = copy.deepcopy(random.sample(support_meta, n_shot))
        return [pair for i in range(n_shot) for pair in (raw[i]["same"], raw[i]["diff"])]
    return random.sample(support_meta, n_shot)


def _original_run(task, rows, shots, seed):
    query_meta, support_meta = _original_format(task, rows)
    saved = random.getstate()
    try:
        random.seed(seed)
        out = {}
        for shot in shots:
            for query in query_meta:
                demos = _original_select(support_meta, shot, task, query)
                out[(seed, shot, query["id"])] = (
                    [d["id"] for d in demos],
                    [str(d["answer"]) for d in demos],
                )
        return out
    finally:
        random.setstate(saved)


@pytest.mark.parametrize(
    "task",
    ["open_mi", "matching_mi", "clevr", "operator_induction", "operator_induction_interleaved"],
)
def test_legacy_replays_the_original_call_stream(pools, task):
    legacy = _episodes(pools[task], task, "legacy")
    expected = {}
    for seed in (0, 1, 2):
        expected.update(_original_run(task, pools[task], _shots(task), seed))
    assert len(legacy) == len(expected) == 3 * len(_shots(task)) * len(pools[task].query)
    for key, (ids, answers) in expected.items():
        assert legacy[key]["demo_ids"] == ids, key
        assert legacy[key]["demo_answers"] == answers, key


def test_legacy_stream_runs_through_shots_and_zero_shot_open_mi_draws(pools):
    with_zero = _episodes(pools["open_mi"], "open_mi", "legacy", shots=(0, 1), seeds=(0,))
    without = _episodes(pools["open_mi"], "open_mi", "legacy", shots=(1,), seeds=(0,))
    ones = [k for k in with_zero if k[1] == 1]
    assert any(with_zero[k]["demo_ids"] != without[k]["demo_ids"] for k in ones)
    # random.sample(k=0) draws nothing, so a leading 0-shot pass leaves clevr's stream alone
    clevr_zero = _episodes(pools["clevr"], "clevr", "legacy", shots=(0, 2), seeds=(0,))
    clevr_two = _episodes(pools["clevr"], "clevr", "legacy", shots=(2,), seeds=(0,))
    assert all(clevr_zero[k]["demo_ids"] == clevr_two[k]["demo_ids"] for k in clevr_two)


@pytest.mark.parametrize("task", ["open_mi", "matching_mi", "clevr", "operator_induction"])
def test_hashed_episodes_do_not_depend_on_order_or_subset(pools, task):
    rows = pools[task]
    full = _episodes(rows, task, "hashed")
    reordered = _episodes(
        rows,
        task,
        "hashed",
        shots=tuple(reversed(_shots(task)))[:2],
        seeds=(2,),
        query=list(reversed(rows.query))[:3],
        support=list(reversed(rows.support)),
    )
    assert reordered and all(full[k] == reordered[k] for k in reordered)
    assert any(
        full[(0, n, q)]["demo_ids"] != full[(1, n, q)]["demo_ids"] for (_, n, q) in full if n > 1
    )


def test_hashed_operator_demos_never_show_the_query_expression(pools):
    task = "operator_induction_interleaved"  # 95 support pairs: most queries repeat one
    rows = pools[task]
    support = {r["id"]: r for r in rows.support}
    queries = {q["id"]: q for q in rows.query}
    hashed = _episodes(rows, task, "hashed")
    for (_, n_shot, query_id), episode in hashed.items():
        query = queries[query_id]["extras"]
        assert len(episode["demo_ids"]) == n_shot
        for demo_id, answer in zip(episode["demo_ids"], episode["demo_answers"], strict=True):
            demo = support[demo_id]["extras"]
            assert (demo["a"], demo["b"]) != (query["a"], query["b"])
            name = {"+": "plus", "-": "minus", "x": "times"}[query["operator"]]
            assert answer == str(demo["answers_by_op"][name])
        assert episode["extras"] == {"reveals_query_expression": False}
    legacy = _episodes(rows, task, "legacy")
    revealing = [
        e
        for (_, _, qid), e in legacy.items()
        if any(
            (support[d]["extras"]["a"], support[d]["extras"]["b"])
            == (queries[qid]["extras"]["a"], queries[qid]["extras"]["b"])
            for d in e["demo_ids"]
        )
    ]
    assert revealing and all(e["extras"]["reveals_query_expression"] for e in revealing)
    _, stats = build_episodes(
        task,
        rows.support,
        rows.query,
        shots=_shots(task),
        seeds=(0, 1, 2),
        samplers=("hashed", "legacy"),
    )
    assert stats["episodes_revealing_query_expression"] == {"hashed": 0, "legacy": len(revealing)}


def test_open_mi_episodes_are_two_way_and_interleaved(pools):
    rows = pools["open_mi"]
    queries = {q["id"]: q["extras"] for q in rows.query}
    for sampler in ("hashed", "legacy"):
        for (_, n_shot, query_id), episode in _episodes(rows, "open_mi", sampler).items():
            query = queries[query_id]
            classes = episode["extras"]["classes"]
            assert len(classes) == 2 and query["query_word"] in classes
            assert episode["extras"]["distractor"] in set(classes) - {query["query_word"]}
            stored = {s["word"]: s["image_ids"] for s in query["episode_support"]}
            expected = [stored[w][i] for i in range(n_shot) for w in classes]
            assert episode["demo_ids"] == expected
            assert episode["demo_answers"] == [w for _ in range(n_shot) for w in classes]


def test_matching_shots_are_same_and_different_pairs(pools):
    rows = pools["matching_mi"]
    support = {r["id"]: r for r in rows.support}
    for (_, n_shot, _), episode in _episodes(rows, "matching_mi", "hashed").items():
        assert len(episode["demo_ids"]) == 2 * n_shot
        assert episode["demo_answers"] == ["Yes", "No"] * n_shot
        groups = [support[d]["extras"]["group_id"] for d in episode["demo_ids"]]
        assert groups[::2] == groups[1::2] and len(set(groups)) == n_shot


def test_more_shots_than_support_is_a_plan_error(pools):
    with pytest.raises(PlanError, match="need 31 support items"):
        _episodes(pools["clevr"], "clevr", "hashed", shots=(31,))
    with pytest.raises(PlanError, match="stored images"):
        _episodes(pools["open_mi"], "open_mi", "legacy", shots=(6,))


def test_episode_rows_reference_existing_support(pools, tmp_path: Path):
    for task, rows in pools.items():
        ids = {r["id"] for r in rows.support}
        found, _ = build_episodes(
            task,
            rows.support,
            rows.query,
            shots=_shots(task),
            seeds=(0,),
            samplers=("hashed", "legacy"),
        )
        keys = [(e["sampler"], e["seed"], e["n_shot"], e["query_id"]) for e in found]
        assert keys == sorted(keys)
        assert all(set(e["demo_ids"]) <= ids for e in found)
