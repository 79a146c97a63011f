"""Curation settings from params.yaml, their params hash, and the decision log's semantics."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from benchsmith.builders.curate.config import (
    STAGE_ORDER,
    CurateConfig,
    ImageSettings,
    LLMSettings,
    config_from_params,
)
from benchsmith.builders.curate.decisions import DECISIONS_SCHEMA, DecisionLog
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import params_hash
from benchsmith.core.params import load_params
from benchsmith.stages.decision import StageDecision

REPO_PARAMS = Path(__file__).resolve().parents[2] / "params.yaml"


def test_the_repository_params_block_builds_a_config():
    section = load_params(REPO_PARAMS)["curate"]
    assert section.get("targets"), "params.yaml lists the curate targets the DVC stage runs"
    config = config_from_params(section)
    judges, images, llm = section["judges"], section["images"], section["llm"]
    assert config.judges.metric == judges["metric"]
    assert config.judges.bins == judges["bins"]
    assert config.judges.drop_bins == tuple(judges["drop_bins"])
    assert config.judges.missing_policy == judges["missing_policy"]
    assert config.review.detail == section["review"]["detail"]
    assert config.review.human_verdicts is None  # `null` in the file
    assert config.text_only.models == tuple(section["text_only"]["models"])
    assert config.blind.threshold == section["blind"]["threshold"]
    assert config.images.near_threshold == images["near_threshold"]
    assert config.images.against_splits == tuple(images["against_splits"])
    assert config.ngram.corpus == () and config.ngram.n == section["ngram"]["n"]
    assert config.llm.cache_dir == Path(llm["cache_dir"])
    assert isinstance(config.llm.cache_dir, Path)
    assert (config.target_size, config.seed) == (section["target_size"], section["seed"])
    json.dumps(config.hashable())  # plain JSON, for build_info.json and the card


def test_unknown_keys_are_errors_naming_the_valid_ones():
    with pytest.raises(BenchsmithError) as info:
        config_from_params({"seed": 1, "near_threshold": 3})
    message = str(info.value)
    assert "'near_threshold'" in message and "params.yaml" in message
    for key in ("images", "judges", "llm", "ngram", "seed", "target_size", "targets"):
        assert key in message.split("valid keys:")[1]
    with pytest.raises(BenchsmithError) as info:
        config_from_params({"images": {"near_treshold": 3, "enabled": True}})
    message = str(info.value)
    assert "curate.images" in message and "near_treshold" in message
    assert "against_splits, enabled, near_threshold, workers" in message
    with pytest.raises(BenchsmithError, match="curate.llm settings: api_key"):
        config_from_params({"llm": {"api_key": "sk-x"}})


def test_path_and_list_fields_are_coerced():
    config = config_from_params(
        {
            "judges": {"files": ["preds/a.jsonl", "preds/b.jsonl"], "drop_bins": ["easy", "hard"]},
            "review": {"human_verdicts": "annotations/v.jsonl"},
            "ngram": {"corpus": "corpus/exams.txt"},  # one file, not a list
            "images": {"against_splits": "support"},
            "text_only": {"models": None},
            "llm": {"cache_dir": "cache/here"},
        }
    )
    assert config.judges.files == (Path("preds/a.jsonl"), Path("preds/b.jsonl"))
    assert config.judges.drop_bins == ("easy", "hard")
    assert config.review.human_verdicts == Path("annotations/v.jsonl")
    assert config.ngram.corpus == (Path("corpus/exams.txt"),)
    assert config.images.against_splits == ("support",)  # not ('s', 'u', 'p', ...)
    assert config.text_only.models == ()
    assert config.llm.cache_dir == Path("cache/here")
    assert config_from_params({"ngram": {"corpus": None}}).ngram.corpus == ()
    assert config_from_params(None) == CurateConfig()
    assert config_from_params({"review": None}) == CurateConfig()


def test_hash_ignores_the_cache_folder_but_not_the_settings():
    base = config_from_params({"images": {"near_threshold": 4}, "llm": {"cache_dir": "a"}})

    def digest(config: CurateConfig) -> str:
        return params_hash({"curate": config.hashable()})

    moved = replace(base, llm=replace(base.llm, cache_dir=Path("/elsewhere/cache")))
    assert moved != base and digest(moved) == digest(base)
    assert "cache_dir" not in base.hashable()["llm"]
    for changed in (
        replace(base, images=ImageSettings(near_threshold=5)),
        replace(base, llm=LLMSettings(cache_dir=Path("a"), concurrency=1)),
        replace(base, seed=1),
        replace(base, target_size=10),
    ):
        assert digest(changed) != digest(base), changed
    files = config_from_params({"judges": {"files": ["x/judge.jsonl"]}}).hashable()
    assert files["judges"]["files"] == ["x/judge.jsonl"]  # paths as posix strings


def test_stage_order_is_lime_then_leakage_then_draw():
    assert STAGE_ORDER[0] == "difficulty" and STAGE_ORDER[-1] == "final_draw"
    assert STAGE_ORDER.index("zero_pass_review") < STAGE_ORDER.index("text_only")


# --- the decision log --------------------------------------------------------------------------


def test_decision_log_stages_see_only_survivors():
    log = DecisionLog.start(["d", "a", "c", "b", "e"])
    log.record(
        "first",
        {
            "a": {"action": "drop", "reason": "EASY", "evidence": {"n_correct": 9}},
            "c": StageDecision("c", "keep", "TEXT_ONLY_LLM_ERROR", {"model": "m"}),
            "zzz": {"action": "drop", "reason": "EASY"},  # not a sample: ignored
        },
    )
    assert log.alive() == ["d", "c", "b", "e"]  # dataset order, not sorted
    log.record(
        "second",
        {
            "a": {"action": "keep"},  # already dropped: the stage cannot bring it back
            "b": StageDecision("b", "drop", "NGRAM_OVERLAP", {"matches": 2}),
            "e": StageDecision("e", "drop", "NGRAM_OVERLAP"),
        },
    )
    assert log.alive() == ["d", "c"] and log.kept == {"d", "c"}
    assert [r["stage"] for r in log.for_sample("a")] == ["first"]
    assert [(r["stage"], r["action"]) for r in log.for_sample("b")] == [
        ("first", "keep"),
        ("second", "drop"),
    ]
    first_a = log.for_sample("a")[0]
    assert first_a["reason"] == "EASY" and json.loads(first_a["evidence"]) == {"n_correct": 9}
    unmentioned = log.for_sample("d")
    assert [(r["action"], r["reason"], r["evidence"]) for r in unmentioned] == [
        ("keep", None, "{}"),
        ("keep", None, "{}"),
    ]
    assert log.stage_counts() == [
        {
            "stage": "first",
            "in": 5,
            "kept": 4,
            "dropped": 1,
            "reasons": {"drop:EASY": 1, "keep:TEXT_ONLY_LLM_ERROR": 1},
        },
        {"stage": "second", "in": 4, "kept": 2, "dropped": 2, "reasons": {"drop:NGRAM_OVERLAP": 2}},
    ]
    table = log.table()
    assert table.schema == DECISIONS_SCHEMA and table.num_rows == 9


def test_decision_log_rejects_an_unknown_action():
    log = DecisionLog.start(["a"])
    with pytest.raises(ValueError, match="stage odd: action must be keep or drop, got 'maybe'"):
        log.record("odd", {"a": {"action": "maybe", "reason": "X"}})
    assert log.kept == {"a"}
