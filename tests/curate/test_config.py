"""Curation settings from params.yaml, their params hash, and the decision log's semantics."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import replace
from pathlib import Path

import pytest

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import params_hash
from benchsmith.core.params import load_params
from benchsmith.curate.config import CurateConfig, LLMSettings, config_from_params
from benchsmith.curate.decisions import DECISIONS_SCHEMA, DecisionLog
from benchsmith.stages import STAGES
from benchsmith.stages.base import StageDecision, plain
from benchsmith.stages.image_duplicates import ImageSettings

REPO_PARAMS = Path(__file__).resolve().parents[2] / "params.yaml"


def test_the_repository_params_block_builds_a_config():
    section = load_params(REPO_PARAMS)["curate"]
    assert section.get("targets"), "params.yaml lists the curate targets the DVC stage runs"
    config = config_from_params(section)
    judges, images, llm = section["judges"], section["images"], section["llm"]
    difficulty = config.stages["difficulty"]
    assert difficulty.metric == judges["metric"]
    assert difficulty.bins == judges["bins"]
    assert difficulty.drop_bins == tuple(judges["drop_bins"])
    assert difficulty.missing_policy == judges["missing_policy"]
    assert config.stages["zero_pass_review"].detail == section["review"]["detail"]
    assert config.stages["zero_pass_review"].human_verdicts is None  # `null` in the file
    assert config.stages["text_only"].models == tuple(section["text_only"]["models"])
    assert config.stages["blind_baselines"].threshold == section["blind"]["threshold"]
    assert config.stages["image_duplicates"].near_threshold == images["near_threshold"]
    assert config.stages["image_duplicates"].against_splits == tuple(images["against_splits"])
    ngram = config.stages["ngram_overlap"]
    assert ngram.corpus == () and ngram.n == section["ngram"]["n"]
    assert config.llm.cache_dir == Path(llm["cache_dir"])
    assert isinstance(config.llm.cache_dir, Path)
    draw = config.stages["final_draw"]
    assert (draw.target_size, draw.seed) == (section["target_size"], section["seed"])
    assert config.seed == section["seed"]
    json.dumps(config.hashable())  # plain JSON, for build_info.json and the card


def test_every_stage_setting_is_spelled_out_in_params_yaml():
    """A knob a user cannot see in params.yaml is a knob they cannot find."""
    section = load_params(REPO_PARAMS)["curate"]
    for stage in STAGES:
        block = section if stage.params_key is None else section[stage.params_key]
        for field in dataclasses.fields(stage.settings_type):
            assert field.name in block, f"curate.{stage.params_key}.{field.name} ({stage.name})"


def test_unknown_keys_are_errors_naming_the_valid_ones():
    with pytest.raises(BenchsmithError) as info:
        config_from_params({"seed": 1, "near_threshold": 3})
    message = str(info.value)
    assert "near_threshold" in message and "params.yaml" in message
    for key in ("images", "judges", "llm", "ngram", "seed", "target_size", "targets"):
        assert key in message.split("valid keys:")[1]
    with pytest.raises(BenchsmithError) as info:
        config_from_params({"images": {"near_treshold": 3, "enabled": True}})
    message = str(info.value)
    assert "curate.images" in message and "near_treshold" in message
    assert "against_splits, enabled, executor, near_threshold, workers" in message
    with pytest.raises(BenchsmithError, match="curate.llm settings: api_key"):
        config_from_params({"llm": {"api_key": "sk-x"}})


def test_the_llm_client_block_is_declared_once(tmp_path, capsys):
    """curate.llm's keys, defaults, bounds, flags and docs rows come from ``LLMSettings``: a
    value out of bounds names its key, params.yaml spells every key, a flag overrides its key,
    and ``--help`` shows each with its params.yaml key."""
    from benchsmith.cli import main
    from benchsmith.core.settings import declared

    assert set(load_params(REPO_PARAMS)["curate"]["llm"]) == set(declared(LLMSettings))
    assert config_from_params({"llm": {"timeout_s": 60}}).llm.timeout_s == 60.0  # one setting
    with pytest.raises(BenchsmithError, match=r"curate\.llm\.retry_wait_s must be"):
        config_from_params({"llm": {"retry_wait_s": -1}})
    flags = {"retry_wait_s": 0.2, "max_retries": 1, "cache_dir": Path("c")}
    llm = config_from_params({}).with_flags(flags).llm
    assert (llm.retry_wait_s, llm.max_retries, llm.cache_dir) == (0.2, 1, Path("c"))
    with pytest.raises(SystemExit):
        main(["curate", "--help"])
    shown = capsys.readouterr().out
    for name in declared(LLMSettings):
        assert f"--{name.replace('_', '-')}" in shown and f"curate.llm.{name}" in shown
    assert "--llm-cache" in shown  # the older name still works


def test_every_stage_setting_is_declared_once():
    """Each stage field is declared with ``setting()``: its flag, help, choices and bounds, its
    params schema and its docs row come from there (the docs page is held to the declarations
    by tests/test_docs.py). An off switch turns its setting off; a value out of bounds names
    its key."""
    from benchsmith.core.settings import declared

    for stage in STAGES:
        fields = {f.name for f in dataclasses.fields(stage.settings_type)}
        assert set(declared(stage.settings_type)) == fields, stage.name
        assert {f.field for f in stage.flags} <= fields
    blind = next(s for s in STAGES if s.name == "blind_baselines")
    assert [f.flag for f in blind.flags] == ["--no-blind", "--blind-threshold"]
    config = config_from_params({}).with_flags({"no_blind": True, "ngram": 5})
    assert config.stages["blind_baselines"].enabled is False
    assert config.stages["ngram_overlap"].n == 5
    from benchsmith.core.schema import check_node
    from benchsmith.curate.config import params_schema

    problems: list[str] = []
    check_node(params_schema(), {"images": {"near_threshold": 65}}, "curate", problems)
    assert len(problems) == 1 and "curate.images.near_threshold" in problems[0], problems


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
    stages = config.stages
    assert stages["difficulty"].files == (Path("preds/a.jsonl"), Path("preds/b.jsonl"))
    assert stages["difficulty"].drop_bins == ("easy", "hard")
    assert stages["zero_pass_review"].human_verdicts == Path("annotations/v.jsonl")
    assert stages["ngram_overlap"].corpus == (Path("corpus/exams.txt"),)
    assert stages["image_duplicates"].against_splits == ("support",)  # not ('s', 'u', ...)
    assert stages["text_only"].models == ()
    assert config.llm.cache_dir == Path("cache/here")
    assert config_from_params({"ngram": {"corpus": None}}).stages["ngram_overlap"].corpus == ()
    assert (
        config_from_params(None) == config_from_params({}) == config_from_params({"review": None})
    )


def test_hash_ignores_the_cache_folder_but_not_the_settings():
    base = config_from_params({"images": {"near_threshold": 4}, "llm": {"cache_dir": "a"}})

    def digest(config: CurateConfig) -> str:
        return params_hash({"curate": config.hashable()})

    def with_stage(name: str, **changes) -> CurateConfig:
        stages = {**base.stages, name: replace(base.stages[name], **changes)}
        return CurateConfig(stages, base.llm)

    moved = replace(base, llm=replace(base.llm, cache_dir=Path("/elsewhere/cache")))
    assert moved != base and digest(moved) == digest(base)
    assert "cache_dir" not in base.hashable()["llm"]
    for changed in (
        with_stage("image_duplicates", near_threshold=5),
        replace(base, llm=LLMSettings(cache_dir=Path("a"), concurrency=1)),
        with_stage("final_draw", seed=1),
        with_stage("final_draw", target_size=10),
    ):
        assert digest(changed) != digest(base), changed
    files = config_from_params({"judges": {"files": ["x/judge.jsonl"]}}).hashable()
    assert files["judges"]["files"] == ["x/judge.jsonl"]  # paths as posix strings


def test_hashable_keeps_the_params_layout():
    """The params hash of a curated dataset reads like params.yaml's curate block (stage
    blocks under their params keys, the draw's fields at the top, the LLM client's), so the
    same settings give the same hash whatever the code's internal layout."""
    data = config_from_params({}).hashable()
    assert set(data) == {
        "judges",
        "review",
        "text_only",
        "blind",
        "images",
        "ngram",
        "llm",
        "target_size",
        "seed",
    }
    images = plain(ImageSettings())
    assert {k: v for k, v in images.items() if k not in ("workers", "executor")} == data["images"]
    assert config_from_params({"images": {"workers": 2, "executor": "ray"}}).hashable() == data
    assert data["llm"] == {"base_url": None, "concurrency": 4, "timeout_s": 60.0, "max_retries": 5}


def test_stage_order_is_lime_then_leakage_then_draw():
    names = STAGES.names()
    assert names[0] == "difficulty" and names[-1] == "final_draw"
    assert names.index("zero_pass_review") < names.index("text_only")


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
