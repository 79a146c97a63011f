"""Read rows of a published dataset folder without going through the ``datasets`` cache.

A published folder is a *source* for whatever comes after publishing (audits, scorers,
curation), so this lives with the sources, below every layer that reads it.

Used by the audit and by :func:`benchsmith.publish.mmneedle_reader.load_sample_with_images`;
pyarrow's filters read only the row groups that can hold the wanted ids.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.dataset as pads

from benchsmith.core.errors import AuditError


def read_build_info(dataset_dir: str | Path) -> dict[str, Any]:
    path = Path(dataset_dir) / "build_info.json"
    if not path.is_file():
        raise AuditError(
            "not a benchsmith dataset folder (no build_info.json)",
            path=dataset_dir,
            fix="point at a folder written by `benchsmith ... publish`",
        )
    return json.loads(path.read_text(encoding="utf-8"))


def config_files(dataset_dir: str | Path, config: str, split: str = "test") -> list[Path]:
    folder = Path(dataset_dir) / "data" / config
    files = sorted(folder.glob(f"{split}-*.parquet"))
    if not files:
        available = sorted(p.name for p in (Path(dataset_dir) / "data").glob("*") if p.is_dir())
        raise AuditError(
            f"config {config!r} (split {split}) not found; available: {', '.join(available)}",
            path=folder,
        )
    return files


def read_rows(
    dataset_dir: str | Path, config: str, column: str, values: list[Any], split: str = "test"
) -> dict[Any, dict[str, Any]]:
    """Rows of ``config`` whose ``column`` is in ``values``, keyed by that column."""
    dataset = pads.dataset(
        [str(p) for p in config_files(dataset_dir, config, split)], format="parquet"
    )
    table = dataset.to_table(filter=pads.field(column).isin(values))
    return {row[column]: row for row in table.to_pylist()}
