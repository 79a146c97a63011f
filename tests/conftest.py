"""Shared fixtures: miniature COCO and ScanNet sources in their real formats, one MMNeedle build
and one MMIU plan per session."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

from benchsmith.builders.mmiu.config import MmiuConfig
from benchsmith.builders.mmiu.plan import MmiuSources, build_mmiu
from benchsmith.builders.mmneedle.config import PlanConfig, RenderConfig
from benchsmith.builders.mmneedle.plan import plan_mmneedle, write_plan
from benchsmith.builders.mmneedle.publication import MmneedlePublication
from benchsmith.builders.mmneedle.render import render_mmneedle
from benchsmith.publish.publisher import publish
from benchsmith.sources.coco.reader import read_captions
from benchsmith.sources.coco.sample import write_sample_coco
from benchsmith.sources.scannet.sample import write_sample_scannet

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def _offline_hf(monkeypatch, tmp_path_factory):
    """Keep `datasets` offline and its cache inside the test's temporary space."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path_factory.getbasetemp() / "hf_home"))


@pytest.fixture(scope="session")
def sample_coco(tmp_path_factory) -> Path:
    """A 660-image miniature COCO 2014 val (read-only for tests: copy before changing it)."""
    return write_sample_coco(tmp_path_factory.mktemp("coco") / "coco", n_images=660, seed=0)


@pytest.fixture(scope="session")
def sample_project(tmp_path_factory) -> Path:
    """The whole sample pipeline run once by its dvc.yaml commands (read-only for tests)."""
    from project_fixtures import build_sample_project

    return build_sample_project(tmp_path_factory.mktemp("project") / "project")


@pytest.fixture(scope="session")
def built(tmp_path_factory, sample_coco) -> dict[str, Path]:
    """plan -> render -> publish of the sample profile sizes (pool 20, 10 samples per config)."""
    root = tmp_path_factory.mktemp("build")
    captions = sample_coco / "annotations" / "captions_val2014.json"
    source = read_captions(captions)
    plan_dir, render_dir, out = root / "plan", root / "render", root / "published"
    write_plan(
        plan_mmneedle(source, PlanConfig(pool_size=20, samples_per_config=10)),
        source,
        plan_dir,
        sample_coco / "val2014",
    )
    render_mmneedle(plan_dir, render_dir, RenderConfig(workers=1))
    publish(MmneedlePublication(plan_dir, render_dir), out, "1.2.3")
    return {
        "root": root,
        "coco": sample_coco,
        "captions": captions,
        "plan": plan_dir,
        "render": render_dir,
        "published": out,
    }


def write_reference_captions(path: Path) -> Path:
    """COCO-format captions file ordered like the real one, from the shipped reference rows."""
    with gzip.open(
        FIXTURES / "coco_val2014_last_captions.jsonl.gz", "rt", encoding="utf-8"
    ) as handle:
        rows = [json.loads(line) for line in handle]
    data = {
        "images": [
            {
                "id": r["image_id"],
                "file_name": r["file_name"],
                "license": 1,
                "width": 640,
                "height": 480,
            }
            for r in rows
        ],
        "annotations": [
            {"id": k + 1, "image_id": r["image_id"], "caption": r["caption"]}
            for k, r in enumerate(rows)
        ],
        "licenses": [{"id": 1, "name": "Attribution-NonCommercial-ShareAlike License", "url": ""}],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def mmiu_sources(tmp_path_factory, sample_coco) -> MmiuSources:
    """Two ray-cast ScanNet scenes (30 frames each, frame 6 with a -inf pose) and the COCO
    miniature (read-only: copy before changing)."""
    scannet = write_sample_scannet(tmp_path_factory.mktemp("scannet") / "ScanNet", n_scenes=2)
    return MmiuSources(scannet=scannet, coco=sample_coco)


@pytest.fixture(scope="session")
def mmiu_plan(tmp_path_factory, mmiu_sources) -> Path:
    """The sample-profile plan of every task (12 items each)."""
    out = tmp_path_factory.mktemp("mmiu") / "plan"
    build_mmiu(MmiuConfig.from_params({}, "sample"), mmiu_sources, out)
    return out


@pytest.fixture(scope="session")
def multi_build(tmp_path_factory) -> dict[str, Path]:
    """One MULTI build of the sample exam sources through the CLI: ocr, questions, select,
    publish."""
    from benchsmith.cli import main

    root = tmp_path_factory.mktemp("multi")
    exams = root / "exams"
    assert main(["source", "sample", "exams", "--out", str(exams)]) == 0
    paths = {"root": root, "exams": exams, "release": exams / "release",
             "converted": root / "converted", "questions": root / "questions",
             "plan": root / "plan", "published": root / "published", "cache": root / "cache"}  # fmt: skip
    assert main(["build", "multi", "ocr", "--exams", str(exams), "--cache", str(paths["cache"]),
                 "--out", str(paths["converted"])]) == 0  # fmt: skip
    assert main(["build", "multi", "questions", "--release", str(paths["release"]),
                 "--converted", str(paths["converted"]), "--out", str(paths["questions"])]) == 0  # fmt: skip
    assert main(["build", "multi", "select", str(paths["questions"]),
                 "--out", str(paths["plan"])]) == 0  # fmt: skip
    assert main(["publish", "multi", str(paths["plan"]), "--out", str(paths["published"])]) == 0
    return paths


@pytest.fixture(scope="session")
def ray_cluster():
    """A local Ray (2 CPUs, a small object store) shared by every test that runs on Ray; the
    executors see it running and leave it up."""
    import ray  # the ray extra is part of [dev]: a missing Ray is a failure, not a skip

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # offline: no usage reports

    ray.init(
        num_cpus=2,
        object_store_memory=256 * 1024**2,
        include_dashboard=False,
        logging_level="ERROR",
    )
    yield ray
    ray.shutdown()
