"""The provenance struct carried by every published row (ARCHITECTURE.md contract 2).

It says which code and parameters made the row and which source files (with their sha256 and
licence) it came from, so ``benchsmith audit`` can re-check it years later.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

import datasets

from benchsmith import __version__

PROVENANCE_FEATURE = {
    "family": datasets.Value("string"),
    "builder_version": datasets.Value("string"),
    "code_revision": datasets.Value("string"),
    "params_hash": datasets.Value("string"),
    "seed": datasets.Value("int64"),
    "sources": datasets.List(
        {
            "dataset": datasets.Value("string"),
            "split": datasets.Value("string"),
            "id": datasets.Value("string"),
            "file": datasets.Value("string"),
            "sha256": datasets.Value("string"),
            "license": datasets.Value("string"),
            "url": datasets.Value("string"),
        }
    ),
    "decisions": datasets.List(
        {
            "stage": datasets.Value("string"),
            "action": datasets.Value("string"),
            "reason": datasets.Value("string"),
            "evidence": datasets.Value("string"),
        }
    ),
}


@functools.cache
def code_revision() -> str:
    """``benchsmith==X`` plus the git commit (``+dirty`` when the tree has edits), if known."""
    try:
        rev = _git("rev-parse", "--short=12", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no", "--", "benchsmith")
    except (OSError, subprocess.SubprocessError):
        return f"benchsmith=={__version__}"
    return f"benchsmith=={__version__}+g{rev}{'.dirty' if dirty else ''}"


def _git(*args: str) -> str:
    """Stripped stdout of a git command run in the checkout holding this package."""
    root = Path(__file__).resolve().parents[2]
    result = subprocess.run(
        ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True
    )
    return result.stdout.strip()
