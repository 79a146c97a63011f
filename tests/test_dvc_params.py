"""Every declared setting that shapes what is built is a DVC param of a stage: a change to it
reruns what it changes (and ``dvc status`` says so). ``vlicl.words`` and ``vlicl.shots`` were
once read by the plan but listed by no stage, so editing them rebuilt nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from benchsmith.builders import FAMILIES
from benchsmith.commands.params_check import TOP_LEVEL_BLOCKS
from benchsmith.core.settings import declared, key_of
from benchsmith.curate.config import DECLARED_BLOCKS as CURATE_BLOCKS

ROOT = Path(__file__).resolve().parents[1]


def stage_params() -> dict[str, list[str]]:
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    return {name: [str(p) for p in stage.get("params") or ()] for name, stage in stages.items()}


def output_keys() -> list[str]:
    """The params key of every declared field that shapes the output."""
    blocks = {**TOP_LEVEL_BLOCKS, **CURATE_BLOCKS}
    for family in FAMILIES:
        blocks.update(family.declared_settings())
    keys = []
    for block, kind in blocks.items():
        for name, (_, info) in declared(kind).items():
            if info.shapes_output:
                keys.append(".".join((*block, key_of(kind, name, "sample"))))
    return sorted(keys)


def listed(key: str, entries: list[str]) -> bool:
    """A stage lists ``key`` itself or a block holding it (``vlicl.sizes``, ``curate``)."""
    return any(key == entry or key.startswith(entry + ".") for entry in entries)


@pytest.mark.parametrize("key", output_keys())
def test_a_setting_that_shapes_the_output_is_a_param_of_a_stage(key):
    every = [entry for entries in stage_params().values() for entry in entries]
    assert listed(key, every), (
        f"{key} shapes what is built but no stage of dvc.yaml lists it (or its block) under "
        "params: a change to it would rerun nothing"
    )


def test_the_check_fails_for_a_key_no_stage_lists():
    entries = stage_params()["vlicl_plan"]
    assert listed("vlicl.words", entries) and listed("vlicl.sizes.sample.clevr.support", entries)
    without = [e for e in entries if e != "vlicl.words"]
    assert not listed("vlicl.words", without) and not listed("vlicl.wordsmith", entries)
