"""ScanNet frame extraction on an executor: one task per scene, the same plan bytes everywhere.

The reference is the session's sample-profile plan (``mmiu_plan``: frame pairs found in the
calling process); the local pool and Ray must write the same files byte for byte.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from benchsmith.builders.mmiu.config import MmiuConfig
from benchsmith.builders.mmiu.images import ImageSources
from benchsmith.builders.mmiu.plan import build_mmiu
from benchsmith.builders.mmiu.scene_survey import (
    SceneJob,
    SurveyCache,
    survey_scene,
    survey_scenes,
)
from benchsmith.builders.mmiu.scenes import frame_pairs, load_scene, scene_ids
from benchsmith.core.errors import SourceError
from benchsmith.core.executor import ExecutorConfig
from benchsmith.sources.scannet.sample import write_sample_scannet
from benchsmith.sources.scannet.sens import SensReader
from benchsmith.sources.scannet.sens_writer import upscale_depth


def tree_bytes(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}  # fmt: skip


def sample_config() -> MmiuConfig:
    return MmiuConfig.from_params({}, "sample")


def same_surveys(a, b) -> bool:
    return list(a) == list(b) and all(
        a[k].pairs == b[k].pairs
        and a[k].index.records.tolist() == b[k].index.records.tolist()
        and np.array_equal(a[k].index.poses, b[k].index.poses)
        and a[k].index.file_size == b[k].index.file_size
        for k in a
    )


def test_one_scene_task_finds_the_pairs_the_open_scene_finds(mmiu_sources):
    root = mmiu_sources.scannet
    choice = sample_config().frames
    for scene_id in scene_ids(root, "all"):
        with ImageSources(scannet=root) as sources:
            here = list(frame_pairs(load_scene(root, scene_id, sources, {}), choice))
            index = sources.reader(scene_id).index()
        assert here, scene_id  # the sample scenes have pairs, so the comparison means something
        survey = survey_scene(SceneJob(str(root), scene_id, choice))
        assert survey.pairs == here
        assert survey.index.records.tolist() == index.records.tolist()


def test_surveys_come_back_in_scene_order_from_two_workers(mmiu_sources):
    root = mmiu_sources.scannet
    choice = sample_config().frames
    ids = scene_ids(root, "all")
    here = survey_scenes(root, ids, choice)
    pooled = survey_scenes(root, ids, choice, ExecutorConfig("local", 2))
    assert list(here) == ids and same_surveys(here, pooled)


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_the_plan_is_byte_identical_on_every_executor(
    executor, request, tmp_path_factory, mmiu_sources, mmiu_plan
):
    if executor == "ray":
        request.getfixturevalue("ray_cluster")
    out = tmp_path_factory.mktemp(f"mmiu_{executor}") / "plan"
    build_mmiu(sample_config(), mmiu_sources, out, ExecutorConfig(executor, 2))
    assert tree_bytes(out) == tree_bytes(mmiu_plan)


def corrupt_depth(sens: Path, frame: int) -> None:
    """Overwrite the middle of one frame's zlib depth payload: the stream still indexes (its
    records are intact), so only the worker that decodes that depth meets the damage."""
    with SensReader(sens) as reader:
        record = reader.frame(frame)
    with sens.open("r+b") as handle:
        handle.seek(record.depth_offset + record.depth_bytes // 2)
        handle.write(b"\xff" * 64)


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_a_damaged_stream_on_a_worker_names_its_file(executor, request, tmp_path, mmiu_sources):
    if executor == "ray":
        request.getfixturevalue("ray_cluster")
    scannet = tmp_path / "ScanNet"
    shutil.copytree(mmiu_sources.scannet, scannet)
    scene = scene_ids(scannet, "all")[1]
    sens = scannet / "scans" / scene / f"{scene}.sens"
    corrupt_depth(sens, 4)
    sources = type(mmiu_sources)(scannet=scannet, coco=mmiu_sources.coco)
    out = tmp_path / "plan"
    with pytest.raises(SourceError) as raised:
        build_mmiu(sample_config(), sources, out, ExecutorConfig(executor, 2))
    assert str(sens) in str(raised.value)
    assert not out.exists()  # nothing half-written


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchsmith", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def test_the_plan_step_takes_its_executor_from_flags_and_params(tmp_path, mmiu_sources, mmiu_plan):
    params = tmp_path / "params.yaml"
    params.write_text(
        "profile: sample\nseed: 0\nmmiu:\n  plan: {executor: local, workers: 2}\n"
        f"  sources: {{scannet: {mmiu_sources.scannet}, coco: {mmiu_sources.coco}}}\n"
    )
    done = run_cli("build", "mmiu", "plan", "--params", str(params), "--out", "plan",
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "on local (2 worker(s))" in done.stderr
    ours = json.loads((tmp_path / "plan" / "build_info.json").read_text())
    reference = json.loads((mmiu_plan / "build_info.json").read_text())
    assert ours["counts"] == reference["counts"] and ours["params_hash"] == reference["params_hash"]
    for task in reference["counts"]:
        name = f"items/{task}.jsonl"
        assert (tmp_path / "plan" / name).read_bytes() == (mmiu_plan / name).read_bytes()

    params.write_text(params.read_text().replace("executor: local", "executor: rey"))
    done = run_cli("build", "mmiu", "plan", "--params", str(params), "--out", "plan2",
                   cwd=tmp_path)  # fmt: skip
    assert done.returncode != 0
    assert "mmiu.plan.executor" in done.stderr and "ray" in done.stderr
    assert str(params) in done.stderr or "params.yaml" in done.stderr
    assert not (tmp_path / "plan2").exists()


@pytest.fixture(scope="module")
def slow_scannet(tmp_path_factory) -> Path:
    """Four sample scenes with depth at four times the sample's size (320x240): a few tenths
    of a second each to survey, so a run can be killed between scenes (the kill lands within
    a poll, 20 ms, of the first finished scene)."""
    root = write_sample_scannet(tmp_path_factory.mktemp("slow") / "ScanNet", n_scenes=4)
    for sens in sorted(root.glob("scans/*/*.sens")):
        upscale_depth(sens, 4)
    return root


def pose_plan_params(folder: Path, scannet: Path) -> Path:
    params = folder / "params.yaml"
    params.write_text("profile: sample\nseed: 0\nmmiu:\n  tasks: [3d_pose_estimation]\n"
                      f"  plan: {{executor: local, workers: 1}}\n  sources: {{scannet: {scannet}}}\n")  # fmt: skip
    return params


def entries(cache: Path) -> list[str]:
    """Finished cache entries (a run killed mid-write leaves a hidden temporary file)."""
    return sorted(p.name for p in cache.glob("*.npz") if not p.name.startswith("."))


def test_a_killed_plan_resumes_from_the_scenes_it_finished(slow_scannet, tmp_path):
    params = pose_plan_params(tmp_path, slow_scannet)
    command = [sys.executable, "-m", "benchsmith", "build", "mmiu", "plan", "--params",
               str(params), "--pairs-cache", "cache", "--out", "plan"]  # fmt: skip
    cache = tmp_path / "cache"
    child = subprocess.Popen(command, cwd=tmp_path, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not entries(cache) and time.monotonic() < deadline:
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait()
    kept = entries(cache)
    assert 1 <= len(kept) < 4, kept  # killed between scenes
    assert not (tmp_path / "plan").exists()

    resumed = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"frame pairs of {len(kept)} of 4 scene(s) from cache" in resumed.stderr
    assert len(entries(cache)) == 4

    fresh = subprocess.run([*command[:-4], "--pairs-cache", "fresh-cache", "--out", "fresh"],
                           cwd=tmp_path, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert fresh.returncode == 0, fresh.stderr
    assert "from fresh-cache" not in fresh.stderr
    assert tree_bytes(tmp_path / "plan") == tree_bytes(tmp_path / "fresh")


def test_a_changed_or_damaged_cache_entry_is_surveyed_again(mmiu_sources, tmp_path):
    root = Path(shutil.copytree(mmiu_sources.scannet, tmp_path / "ScanNet"))
    choice = sample_config().frames
    ids = scene_ids(root, "all")
    cache = SurveyCache(tmp_path / "cache")
    first = survey_scenes(root, ids, choice, None, cache)
    assert len(list(cache.folder.glob("*.npz"))) == len(ids)
    assert same_surveys(survey_scenes(root, ids, choice, None, cache), first)  # read back exactly
    entry = cache.path(root, ids[0], choice)
    entry.write_bytes(entry.read_bytes()[:-40])  # damaged
    assert cache.get(root, ids[0], choice) is None
    sens = root / "scans" / ids[1] / f"{ids[1]}.sens"
    os.utime(sens, ns=(sens.stat().st_atime_ns, sens.stat().st_mtime_ns + 10**9))
    assert cache.get(root, ids[1], choice) is None  # the stream changed: a new key
    info = root / "scans" / ids[0] / f"{ids[0]}.txt"
    before = cache.path(root, ids[0], choice)
    info.write_text(info.read_text() + "\n")
    assert cache.path(root, ids[0], choice) != before  # the scene info is in the key too
    assert same_surveys(survey_scenes(root, ids, choice, None, cache), first)
