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
    root = Path(__file__).resolve().parents[2]
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "benchsmith"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return f"benchsmith=={__version__}"
    return f"benchsmith=={__version__}+g{rev}{'.dirty' if dirty else ''}"
