"""A curated folder evaluated like the family its rows came from.

A curated subset keeps some rows of one config and split of a family's folder, unchanged (the
audit proves it). So a model sees a kept row exactly as it would in the family's own folder:
the family's prompt, system prompt, demonstrations (VL-ICL's come from the source's support split
and episodes, which a curated folder does not copy), shots, seeds and ids; ``score`` then reads
what ``predict`` wrote with the family's scorer. This module finds the source folder (recorded
in ``build_info.json`` ``roots.source``, relative to the curated folder; ``--root source=DIR``
when it moved), asks the family for its requests or harness rows there, and keeps those of the
curated rows. A kept row the source no longer has is an error naming both folders: the subset and
its source disagree, and predicting the rest would score a different subset.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError


@dataclass(frozen=True)
class CuratedSource:
    """Where a curated config's rows came from, and which of them it kept."""

    family: Any  # the source's Family
    source_dir: Path
    source_info: dict[str, Any]
    config: str
    split: str
    kept: frozenset[str]


def curated_source(dataset_dir: Path, info: dict[str, Any], config: str, split: str,
                   family: Any, roots: Mapping[str, str] | None = None) -> CuratedSource:  # fmt: skip
    """The source folder and kept row ids of ``config``/``split`` of a curated folder whose
    rows came from ``family`` (the caller looks it up: :meth:`CuratedKind.source_family`)."""
    from benchsmith.curate.kind import CURATED
    from benchsmith.hf.reader import iter_row_batches, read_build_info
    from benchsmith.hf.roots import require_roots, resolve_roots

    source = info.get("source") or {}
    if (config, split) != (source.get("config"), source.get("split")):
        raise BenchsmithError(
            f"this curated folder holds {source.get('config')}/{source.get('split')}, "
            f"not {config}/{split}",
            path=Path(dataset_dir),
            fix=f"use --config {source.get('config')} --split {source.get('split')}",
        )
    recorded = info.get("roots") or {}
    resolved = resolve_roots(recorded, dataset_dir, roots)
    require_roots({"source": resolved["source"]} if "source" in resolved else {}, recorded,
                  dataset_dir)  # fmt: skip
    if "source" not in resolved:
        raise BenchsmithError("build_info.json records no source folder for these rows",
                              path=Path(dataset_dir) / "build_info.json",
                              fix="pass it: --root source=DIR")  # fmt: skip
    source_dir = Path(resolved["source"])
    id_column = CURATED.columns(info).id
    kept = frozenset(
        str(row[id_column])
        for _, rows in iter_row_batches(dataset_dir, config, split, columns=[id_column])
        for row in rows
    )
    return CuratedSource(family, source_dir, read_build_info(source_dir), config, split, kept)


def row_key(family: Any, info: dict[str, Any]) -> str:
    """The request key field that names a family's row (VL-ICL: ``query_id``)."""
    return getattr(family, "request_row_key", None) or family.columns(info).id


def kept_only(items: Iterable[Any], kept: frozenset[str], key_of, where: CuratedSource,
              dataset_dir: Path) -> Iterator[Any]:  # fmt: skip
    """``items`` of kept rows, in the family's order; at the end, a kept row none of them named
    is an error (the subset and its source disagree)."""
    seen: set[str] = set()
    for item in items:
        row_id = str(key_of(item))
        if row_id in kept:
            seen.add(row_id)
            yield item
    missing = sorted(kept - seen)
    if missing:
        raise BenchsmithError(
            f"{len(missing)} row(s) of the curated {where.config}/{where.split} are not in its "
            f"source ({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''})",
            path=where.source_dir,
            fix=f"point --root source=DIR at the folder {dataset_dir} was curated from "
            "(`benchsmith audit` on the curated folder checks it)",
        )


def curated_requests(dataset_dir: Path, info: dict[str, Any], config: str, split: str,
                     family: Any, options: Any,
                     roots: Mapping[str, str] | None = None) -> Iterator[Any]:  # fmt: skip
    """The source family's prediction requests for the curated rows of ``config``/``split``."""
    from benchsmith.family.requests import RequestSource

    where = curated_source(dataset_dir, info, config, split, family, roots)
    field = row_key(family, where.source_info)
    requests = family.prediction_requests(
        RequestSource(where.source_dir, where.source_info, config, split, options)
    )
    return kept_only(requests, where.kept, lambda r: r.key[field], where, dataset_dir)


def curated_harness_rows(dataset_dir: Path, info: dict[str, Any], config: str, split: str,
                         family: Any, roots: Mapping[str, str] | None = None,
                         options: Any = None) -> Iterator[Any]:  # fmt: skip
    """The source family's harness rows (VLMEvalKit) for the curated rows; a row the family does
    not send to single-turn harnesses is left out here as in the family's own export."""
    from benchsmith.family.requests import PredictOptions, RequestSource

    where = curated_source(dataset_dir, info, config, split, family, roots)
    rows = family.harness_rows(RequestSource(where.source_dir, where.source_info, config, split,
                                             options or PredictOptions()))  # fmt: skip
    return (row for row in rows if str(row.id) in where.kept)
