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
import hashlib
import json
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
    """``benchsmith==X+src.<digest>``: the version plus a digest of the code that ran.

    The digest covers every module of the package and every shipped card template, by path
    inside the package and content. It names the code by what it is, not by where it came from:
    two clones of one commit, at any path, committed or with the same edits, and the wheel
    built from them all give the same value, so their outputs are byte-identical and a
    committed ``dvc.lock`` stays true in a fresh clone (a git commit id would differ between a
    commit and its working tree and is unknown to an installed wheel).
    """
    from importlib import resources

    package = Path(__file__).resolve().parents[1]
    digest = hashlib.sha256()
    files = [
        (path.relative_to(package).as_posix(), path)
        for path in package.rglob("*.py")
        if "__pycache__" not in path.parts and "cards" not in path.relative_to(package).parts
    ]
    for name, data in sorted(
        [(name, path.read_bytes()) for name, path in files] + list(_card_templates(resources))
    ):
        digest.update(name.encode("utf-8") + b"\0" + data + b"\0")
    return f"benchsmith=={__version__}+src.{digest.hexdigest()[:12]}"


def _card_templates(resources) -> list[tuple[str, bytes]]:
    """``(cards/<name>, bytes)`` of every shipped card template (checkout or wheel alike)."""
    try:
        folder = resources.files("benchsmith.cards")
    except ModuleNotFoundError:
        return []
    return [
        (f"cards/{entry.name}", entry.read_bytes())
        for entry in folder.iterdir()
        if entry.name.endswith(".j2")
    ]
