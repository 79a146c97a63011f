"""A wheel built with ``python -m build`` ships the card templates and renders every card.

The wheel is installed into a folder of its own and put first on ``PYTHONPATH`` in a working
directory far from the source tree, so nothing can be read from the checkout: a small build of
each family is published (MMNeedle, VL-ICL's rendered operator task) and curated, which renders
all three card templates from the installed package.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from huggingface_hub import DatasetCard

from benchsmith.cli import main

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


# One interpreter runs every command from the wheel, one after another, as the CLI runs them
# (``benchsmith.cli.main``), and says which file it imported benchsmith from.
RUN_IN_ONE_PROCESS = """
import json, sys
import benchsmith.hf.card
from benchsmith.cli import main
print(benchsmith.hf.card.__file__)
for argv in json.loads(sys.argv[1]):
    status = main(argv)
    if status:
        sys.exit(f"benchsmith {' '.join(argv)} exited {status}")
"""


def run_from_wheel(site: Path, cwd: Path, *commands: list[str]) -> Path:
    """``benchsmith ARGV`` for each of ``commands`` from the installed wheel at ``site``;
    returns the file ``benchsmith.hf.card`` was imported from."""
    result = subprocess.run(
        [sys.executable, "-c", RUN_IN_ONE_PROCESS, json.dumps(commands)],
        cwd=cwd,
        env={**os.environ, "CI": "true", "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return Path(result.stdout.splitlines()[0].strip())


def test_the_installed_wheel_renders_every_card(installed, tmp_path, monkeypatch):
    # The MMNeedle plan and render come from the checkout, in this process: in a fresh install
    # their numba kernels would compile afresh (~30 s), and they draw no card. Publishing, the
    # VL-ICL build and curation run from the wheel and render all three card templates.
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    assert main(["source", "sample", "coco", "--out", "coco", "--n-images", "30"]) == 0
    plan = ["--grids", "2", "--haystack-sizes", "1", "--needle-counts", "1"]
    sizes = ["--pool-size", "4", "--samples", "4"]
    captions = "coco/annotations/captions_val2014.json"
    assert main(["build", "mmneedle", "plan", "--captions", captions, *plan, *sizes,
                 "--out", "plan"]) == 0  # fmt: skip
    assert main(["build", "mmneedle", "render", "plan", "--workers", "1",
                 "--out", "render"]) == 0  # fmt: skip
    where = run_from_wheel(
        installed,
        tmp_path,
        ["publish", "mmneedle", "plan", "--out", "mm"],
        ["build", "vlicl", "plan", "--tasks", "operator_induction", "--out", "vp"],
        ["build", "vlicl", "leakage", "vp"],
        ["publish", "vlicl", "vp", "--out", "vl"],
        ["curate", "mm", "--config", "m1_n2_k1", "--out", "cur"],
    )
    assert where.is_relative_to(installed)  # not the checkout
    for folder, title in (("mm", "MMNeedle"), ("vl", "VL-ICL"), ("cur", "curated")):
        card = DatasetCard.load(tmp_path / folder / "README.md")
        assert title in card.text and card.data.to_dict()["configs"]
