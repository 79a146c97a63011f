"""What several verbs share: resolving a published folder to its kind, and ``--root``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from benchsmith.builders import FAMILIES
from benchsmith.core.errors import BenchsmithError
from benchsmith.curate.kind import CURATED
from benchsmith.family.base import DatasetKind


def dataset_kinds() -> list[DatasetKind]:
    """Every kind of folder benchsmith publishes: the benchmark families and curated subsets."""
    return [*FAMILIES, CURATED]


def dataset_kind(dataset_dir: Path) -> tuple[DatasetKind, dict[str, Any]]:
    """The kind of a published folder (from its build_info ``family``) and its build_info."""
    from benchsmith.hf.reader import read_build_info

    info = read_build_info(dataset_dir)
    name = info.get("family")
    if name == CURATED.name:
        return CURATED, info
    if name in FAMILIES.names():
        return FAMILIES.get(name), info
    raise BenchsmithError(
        f"build_info.json names family {name!r}, which this benchsmith does not know",
        path=Path(dataset_dir) / "build_info.json",
        fix=f"known: {', '.join([*FAMILIES.names(), CURATED.name])}; upgrade benchsmith",
    )


def evaluated_as(kind: DatasetKind, info: dict[str, Any], dataset_dir: Path):
    """The family whose prompts, requests and scorer evaluate a folder: its own, or for a
    curated folder the family its rows came from (None: a curated subset of a dataset
    benchsmith did not build, read with the generic prompt)."""
    if kind is CURATED:
        name = CURATED.source_family(info)
        return FAMILIES.get(name) if name in FAMILIES.names() else None
    return kind


def add_root_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help="a source that moved since the build (repeatable); NAME per family: "
        + "; ".join(f"{k.name}: {', '.join(k.root_names)}" for k in dataset_kinds()),
    )


def parse_roots(values: list[str], kind: DatasetKind) -> dict[str, str]:
    from benchsmith.hf.roots import parse_root_flags

    return parse_root_flags(values, kind.root_names, kind.name)


COLUMN_ROLES = ("id", "question", "answer", "choices", "image", "subtask")


def column_roles(args: argparse.Namespace, dataset: Path):
    """Column roles: the family's (when benchsmith built the folder), then ``--ROLE-column``."""
    from benchsmith.hf.dataset_view import ColumnMap, merge_columns

    preset = ColumnMap()
    if (Path(dataset) / "build_info.json").is_file():
        kind, info = dataset_kind(dataset)
        require_sample_config(dataset, kind, info, getattr(args, "config", None))
        preset = kind.columns(info)
    given = ColumnMap(**{role: getattr(args, f"{role}_column", None) for role in COLUMN_ROLES})
    return merge_columns(preset, given)


def sample_configs(
    kind: DatasetKind, info: dict[str, Any], dataset: Path, configs: list[str] | None = None
) -> list[str]:
    """The dataset's configs (or ``configs``) that hold samples, not images or episode lists
    the samples point to."""
    from benchsmith.hf.reader import available_configs

    names = available_configs(dataset) if configs is None else configs
    return [c for c in names if kind.not_samples(info, c) is None]


def require_sample_config(
    dataset: Path, kind: DatasetKind, info: dict[str, Any], config: str | None
) -> None:
    """An error naming what ``config`` is when it is absent or holds no samples, with the
    configs that do: a command that reads samples must not blame a column it guessed."""
    if config is None:
        return
    from benchsmith.hf.reader import available_configs

    configs = available_configs(dataset)
    listed = ", ".join(sample_configs(kind, info, dataset, configs)) or "(none)"
    if config not in configs:
        raise BenchsmithError(
            f"this dataset has no config {config!r}; configs with samples: {listed}",
            path=dataset,
            fix="pass --config with one of them",
        )
    why = kind.not_samples(info, config)
    if why is not None:
        raise BenchsmithError(
            f"config {config!r} holds no samples ({why}); configs with samples: {listed}",
            path=dataset,
            fix="pass --config with one of them",
        )


EPISODE_FLAGS = ("shots", "seeds", "sampler")


def add_episode_arguments(parser: argparse.ArgumentParser, title: str) -> None:
    """``--shots``, ``--seeds``, ``--sampler``: which VL-ICL episodes a command runs (predict
    and the lmms-eval export); a family lists the ones it reads in ``predict_options``."""
    group = parser.add_argument_group(title)
    group.add_argument("--shots", type=int, nargs="+", metavar="K",
                       help="demonstrations per query (default: every n_shot the episodes have)")  # fmt: skip
    group.add_argument("--seeds", type=int, nargs="+", metavar="S",
                       help="episode seeds (default: every seed)")  # fmt: skip
    group.add_argument("--sampler", choices=("hashed", "legacy"), default="hashed",
                       help="which episodes split (default hashed)")  # fmt: skip


def refuse_unused_episode_flags(args: argparse.Namespace, uses: tuple[str, ...], where: str
                                ) -> None:  # fmt: skip
    """An episode flag given for a dataset (or harness) that does not read it is an error."""
    given = {"shots": args.shots, "seeds": args.seeds, "sampler": args.sampler != "hashed"}
    for flag in EPISODE_FLAGS:
        if given[flag] and flag not in uses:
            raise BenchsmithError(f"--{flag} applies to VL-ICL episodes{where}",
                                  fix=f"drop --{flag}")  # fmt: skip
