"""The ``<family>.publish:`` block every family shares, and what ``benchsmith publish`` reads
besides it, declared once (:mod:`benchsmith.core.settings`, :mod:`benchsmith.core.command_inputs`).

A family whose publish step has more settings subclasses :class:`PublishSettings` (MMIU: how
ScanNet images are published and where they are rendered); its publish inputs (the built
folders it reads) are its own dataclass, :attr:`benchsmith.family.base.Family.publish_inputs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchsmith.core.command_inputs import argument, metrics_file, params_file
from benchsmith.core.settings import check_settings, setting

DEFAULT_MAX_SHARD_MB = 256.0


@dataclass(frozen=True)
class PublishSettings:
    """Where ``benchsmith publish FAMILY`` writes, and how big its parquet shards grow."""

    out: Path | None = setting(
        None, "dataset folder; null writes published/FAMILY", metavar="DIR", shapes_output=False
    )
    max_shard_mb: float = setting(
        DEFAULT_MAX_SHARD_MB,
        "parquet shards roll over past this many MiB of arrow data",
        minimum=0.001,
        metavar="MiB",
    )

    def __post_init__(self) -> None:
        if self.out is not None:
            object.__setattr__(self, "out", Path(self.out))  # a flag or YAML gives a str
        check_settings(self, "publish")


@dataclass(frozen=True)
class PublishRun:
    """What every ``benchsmith publish FAMILY`` reads besides the family's own inputs."""

    dataset_version: str | None = argument(
        "dataset version (default: params version)", metavar="X.Y.Z", flag="--version"
    )
    params: Path | None = params_file()
    metrics: Path | None = metrics_file("published rows and the build checks'")
