"""VL-ICL test helpers: a sample build (leakage, publish, audit tests) and shuffled sources.

Builders promise rows independent of source file order; :func:`shuffle_csv_rows` makes a copy
whose MiniImageNet CSV rows are in another order so tests can check that promise.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

from benchsmith.builders.vlicl.config import VliclConfig
from benchsmith.builders.vlicl.plan import VliclSources, build_vlicl
from benchsmith.sources import SOURCES


def write_vlicl_sample_sources(root: Path, seed: int = 0) -> dict[str, Path]:
    """The sample MiniImageNet, CLEVR, TextOCR and VL-ICL release as ``source sample`` writes
    them, under ``root``; returns the folders the plan reads, by :class:`VliclSources` field
    (``root/miniimagenet``, ``root/clevr/CLEVR_v1.0``, ``root/textocr/TextOCR``, and the
    release ``root/vlicl_release/VL-ICL`` as ``ingest``)."""
    names = {"miniimagenet": "miniimagenet", "clevr": "clevr", "textocr": "textocr",
             "ingest": "vlicl_release"}  # fmt: skip
    return {
        field: SOURCES.get(name).sample(root / name, seed=seed) for field, name in names.items()
    }


def build_sample_vlicl(root: Path) -> tuple[Path, dict[str, Path]]:
    """Sample sources in ``root/sources`` built (sample profile) into ``root/build``.

    Returns (build folder, source folders as :func:`write_vlicl_sample_sources` names them).
    """
    sources = write_vlicl_sample_sources(root / "sources")
    build = root / "build"
    build_vlicl(
        VliclConfig.from_params({}, "sample"),
        VliclSources(**sources),
        build,
    )
    return build, sources


def shuffle_csv_rows(mini: Path, out: Path, splits: tuple[str, ...], seed: int) -> Path:
    """Copy the MiniImageNet folder ``mini`` to ``out`` with the rows of ``splits``' CSVs
    shuffled (header kept first); returns ``out``."""
    shutil.copytree(mini, out)
    for split in splits:
        lines = (out / f"{split}.csv").read_text(encoding="utf-8").splitlines()
        body = lines[1:]
        random.Random(seed).shuffle(body)
        (out / f"{split}.csv").write_text("\n".join([lines[0], *body]) + "\n", encoding="utf-8")
    return out


def publish_ingested(release: Path, tasks: list[str], folder: Path) -> Path:
    """``build vlicl plan --mode ingest`` of ``tasks`` from ``release``, its leakage step and
    ``publish``, as a user runs them (the CLI); the plan goes to ``folder/plan`` and the
    dataset to ``folder/published``, which is returned."""
    from benchsmith.cli import main

    plan, published = folder / "plan", folder / "published"
    for argv in (["build", "vlicl", "plan", "--mode", "ingest", "--tasks", *tasks,
                  "--ingest-dir", release, "--out", plan],
                 ["build", "vlicl", "leakage", plan],
                 ["publish", "vlicl", plan, "--out", published]):  # fmt: skip
        assert main([str(a) for a in argv]) == 0, argv
    return published
