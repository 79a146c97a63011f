"""The sample project built by its own pipeline: every ``dvc.yaml`` stage command, in order.

Tests that need real published folders of every family (the contracts, the audit mutation
tests) share one build: the sample profile with small MMNeedle sizes, run with the same
commands DVC runs, in a scratch project folder.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import yaml

from benchsmith.cli import main

ROOT = Path(__file__).resolve().parents[1]
PIPELINE = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]


def small_params() -> dict:
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["mmneedle"]["sizes"]["sample"] = {"pool_size": 12, "samples_per_config": 4}
    params["mmneedle"]["render"]["workers"] = 1
    return params


def family_stages(family: str) -> list[str]:
    """The family's dvc stages, preceded by the source stages their deps read, in dvc order."""
    own = [name for name in PIPELINE if name.startswith(f"{family}_")]
    sources = {
        f"{dep.split('/')[2]}_source"
        for name in own
        for dep in PIPELINE[name]["deps"]
        if dep.startswith("data/sources/")
    }
    return [name for name in PIPELINE if name in sources or name in own]


def run_stages(project: Path, stages: list[str]) -> None:
    """Run the stages' commands in ``project`` (the working directory DVC would use)."""
    cwd = Path.cwd()
    try:
        os.chdir(project)
        for stage in stages:
            argv = shlex.split(PIPELINE[stage]["cmd"])[1:]
            assert main(argv) == 0, stage
    finally:
        os.chdir(cwd)


def build_sample_project(project: Path) -> Path:
    """Every stage of the pipeline (sources, every family, curation) into ``project``."""
    project.mkdir(parents=True, exist_ok=True)
    (project / "params.yaml").write_text(yaml.safe_dump(small_params()), encoding="utf-8")
    run_stages(project, list(PIPELINE))
    return project
