"""The records every published row carries (ARCHITECTURE.md contract 2), built in one place.

A row's ``provenance`` says which code and parameters made it, which source files (with their
sha256 and licence) it came from, and which stage decisions touched it, so ``benchsmith
audit`` can re-check it years later. Every family and the curation step build it with
:func:`provenance`, its ``sources`` entries with :func:`source_ref` and its ``decisions`` with
:func:`decision_record`, so the struct has one shape whatever wrote it (its Hugging Face
feature is :data:`benchsmith.hf.features.PROVENANCE_FEATURE`).
"""

from __future__ import annotations

import functools
import json
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from benchsmith import __version__

SOURCE_KEYS = ("dataset", "split", "id", "file", "sha256", "license", "url")
DECISION_KEYS = ("stage", "action", "reason", "evidence")


def source_ref(
    *,
    dataset: str,
    split: str,
    id: str,
    file: str,
    sha256: str,
    license: str = "",
    url: str = "",
) -> dict[str, str]:
    """One ``provenance.sources`` entry; ``file`` is relative to a root the family names."""
    return {
        "dataset": dataset,
        "split": split,
        "id": id,
        "file": file,
        "sha256": sha256,
        "license": license,
        "url": url,
    }


def _as_source(entry: Mapping[str, Any]) -> dict[str, str]:
    """Every key present, as a string (absent or empty values become "")."""
    return {key: str(entry.get(key) or "") for key in SOURCE_KEYS}


def decision_record(
    stage: str, action: str, reason: str | None, evidence: str | Mapping[str, Any] | None = None
) -> dict[str, str]:
    """One ``provenance.decisions`` entry; ``evidence`` is stored as JSON text (sorted keys)."""
    if evidence is None:
        evidence = {}
    if not isinstance(evidence, str):
        evidence = json.dumps(evidence, sort_keys=True, ensure_ascii=False)
    return {"stage": stage, "action": action, "reason": reason or "", "evidence": evidence}


def provenance(
    *,
    family: str,
    params_hash: str,
    seed: int,
    sources: Iterable[Mapping[str, Any]] = (),
    decisions: Iterable[Mapping[str, Any]] = (),
    builder_version: str = __version__,
) -> dict[str, Any]:
    """The ``provenance`` struct of one row (the code revision is filled in here)."""
    return {
        "family": family,
        "builder_version": str(builder_version),
        "code_revision": code_revision(),
        "params_hash": params_hash,
        "seed": int(seed),
        "sources": [_as_source(s) for s in sources],
        "decisions": [{k: str(d.get(k) or "") for k in DECISION_KEYS} for d in decisions],
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
