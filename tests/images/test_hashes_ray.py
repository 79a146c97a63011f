"""Image hashing on Ray: the sample profile's leakage and duplicate reports, byte for byte."""

from __future__ import annotations

import os

from benchsmith.cli import main


def test_vlicl_leakage_hashed_on_ray_writes_the_same_report(ray_cluster, sample_project, tmp_path):
    out = tmp_path / "leakage.json"
    cwd = os.getcwd()
    os.chdir(sample_project)  # the plan records its source roots relative to the project
    try:
        argv = ["build", "vlicl", "leakage", "data/vlicl/plan", "--params", "params.yaml",
                "--executor", "ray", "--workers", "2", "--out", str(out)]  # fmt: skip
        assert main(argv) == 0
    finally:
        os.chdir(cwd)
    assert out.read_bytes() == (sample_project / "data/vlicl/leakage.json").read_bytes()


def test_mmneedle_image_check_hashed_on_ray_writes_the_same_report(
    ray_cluster, sample_project, tmp_path
):
    out = tmp_path / "image_check.json"
    project = sample_project
    argv = ["build", "mmneedle", "check-images", str(project / "data/mmneedle/plan"),
            "--images", str(project / "data/sources/coco/val2014"), "--params",
            str(project / "params.yaml"), "--executor", "ray", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    assert out.read_bytes() == (project / "data/mmneedle/image_check.json").read_bytes()
