"""DVC metrics: the few counts a user watches between builds, as a small JSON file per stage.

A stage's full report (``leakage.json``, ``image_check.json``, the curated cards) holds every
finding; its metrics file holds only numbers, nested by config or task, so ``dvc metrics show``
prints a readable table and ``dvc metrics diff`` shows what a change of code or params did to
them. The files live in ``metrics/`` and are committed with ``dvc.lock`` (DVC's convention:
metrics are compared across git revisions).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchsmith.core.atomic import atomic_write_json


def only_numbers(data: Mapping[str, Any], where: str = "metrics") -> dict[str, Any]:
    """``data`` checked to hold only numbers (nested in mappings): DVC shows nothing else."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, Mapping):
            out[str(key)] = only_numbers(value, f"{where}.{key}")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            out[str(key)] = value
        else:
            raise TypeError(f"{where}.{key} is {type(value).__name__}, not a number")
    return out


def write_metrics(path: Path | None, data: Mapping[str, Any]) -> None:
    """Write the metrics file when ``--metrics`` was given (sorted keys: stable bytes)."""
    if path is not None:
        atomic_write_json(path, only_numbers(data))
