"""The fingerprint of an MMNeedle plan folder: what a render records and a publish checks.

Why a module of its own: the publish step checks that the render folder came from this plan,
and it never renders. Imported from the render module, it pulled in the render pool, whose
import asks every later fork server of the process to load the numba kernels (compiled afresh
where the package was just installed); here it needs only hashing.
"""

from __future__ import annotations

from pathlib import Path

from benchsmith.core.hashing import params_hash, sha256_file


def plan_fingerprint(plan_dir: Path) -> str:
    """sha256 over the plan's pools and image table, by their paths in the folder."""
    files = sorted((plan_dir / "pools").glob("n*.parquet")) + [plan_dir / "images.parquet"]
    return params_hash({f.relative_to(plan_dir).as_posix(): sha256_file(f) for f in files})
