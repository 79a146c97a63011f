"""A wheel built with ``python -m build`` ships the card templates and renders every card.

The wheel is installed into a folder of its own and put first on ``PYTHONPATH`` in a working
directory far from the source tree, so nothing can be read from the checkout: a small build of
each family is published (MMNeedle, VL-ICL's rendered operator task) and curated, which renders
all three card templates from the installed package.
"""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from huggingface_hub import DatasetCard

ROOT = Path(__file__).resolve().parents[1]
TEMPLATES = sorted(p.name for p in (ROOT / "cards").glob("*.md.j2"))


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(work / "dist"),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=300,
    )
    [wheel] = (work / "dist").glob("benchsmith-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {f"benchsmith/cards/{t}" for t in TEMPLATES} <= set(names)
    target = work / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return target


def run(site: Path | None, cwd: Path, *argv: str) -> str:
    """``benchsmith ARGV`` from the installed wheel at ``site`` (None: from the checkout)."""
    env = {**os.environ, "CI": "true"}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    result = subprocess.run(
        [sys.executable, "-m", "benchsmith", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def test_the_installed_wheel_renders_every_card(installed, tmp_path):
    where = subprocess.run(
        [sys.executable, "-c", "import benchsmith.hf.card as c; print(c.__file__)"],
        env={**os.environ, "PYTHONPATH": str(installed)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert Path(where.strip()).is_relative_to(installed)  # not the checkout
    # The MMNeedle plan and render come from the checkout: in a fresh install their numba
    # kernels would compile afresh (~30 s), and they draw no card. Publishing, the VL-ICL build
    # and curation run from the wheel and render all three card templates.
    run(None, tmp_path, "source", "sample", "coco", "--out", "coco", "--n-images", "30")
    plan = ["--grids", "2", "--haystack-sizes", "1", "--needle-counts", "1"]
    sizes = ["--pool-size", "4", "--samples", "4"]
    captions = "coco/annotations/captions_val2014.json"
    run(None, tmp_path, "build", "mmneedle", "plan", "--captions", captions, *plan, *sizes,
        "--out", "plan")  # fmt: skip
    run(None, tmp_path, "build", "mmneedle", "render", "--plan", "plan", "--workers", "1",
        "--out", "render")  # fmt: skip
    run(
        installed,
        tmp_path,
        "publish",
        "mmneedle",
        "--plan",
        "plan",
        "--render",
        "render",
        "--out",
        "mm",
    )
    run(
        installed,
        tmp_path,
        "build",
        "vlicl",
        "plan",
        "--tasks",
        "operator_induction",
        "--out",
        "vp",
    )
    run(installed, tmp_path, "build", "vlicl", "leakage", "vp")
    run(installed, tmp_path, "publish", "vlicl", "vp", "--out", "vl")
    run(installed, tmp_path, "curate", "mm", "--config", "m1_n2_k1", "--out", "cur")
    for folder, title in (("mm", "MMNeedle"), ("vl", "VL-ICL"), ("cur", "curated")):
        card = DatasetCard.load(tmp_path / folder / "README.md")
        assert title in card.text and card.data.to_dict()["configs"]
