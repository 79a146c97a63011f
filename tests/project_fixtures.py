"""The sample project the tests read: the fresh checkout's own ``dvc repro`` build, copied.

Tests that need real published folders of every family (the contracts, the audit mutation
tests, the exports) read one build: the one :mod:`fresh_checkout` makes with the README's first
command, in the sample profile with the committed ``params.yaml``. They read a copy of it
(:func:`copy_sample_project`), so nothing a test leaves behind can change what the fresh
checkout's own tests see (a re-run that must do nothing, a lock that must not move).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PIPELINE = yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]


def project_params(project: Path) -> dict:
    return yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))


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


def copy_sample_project(checkout: Path, project: Path) -> None:
    """The built checkout (sources, intermediate data, published folders, OCR cache) copied to
    ``project``; DVC's cache and git are left behind (the tests of a re-run copy the checkout
    itself)."""
    left_behind = {checkout / ".git", checkout / ".dvc" / "cache", checkout / ".dvc" / "tmp"}

    def ignore(folder: str, names: list[str]) -> list[str]:
        return [name for name in names if Path(folder, name) in left_behind]

    shutil.copytree(checkout, project, symlinks=True, ignore=ignore)
