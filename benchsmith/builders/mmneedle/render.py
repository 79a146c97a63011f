"""Render an MMNeedle plan: every stitched image of every pool, as JPEG bytes in parquet.

Each source image is decoded and resized once per build (a memory-mapped cell cache shared by
all grids; when cells are whole 16 px JPEG MCUs each is kept as its JPEG tile, see
:mod:`benchsmith.builders.mmneedle.jpeg_mosaic`), then ``--workers`` processes write the stitched JPEGs:
mosaics of the tiles, or pasted canvases encoded by Pillow, the same bytes. Output::

    OUT/stitched/n{N}.parquet   stitched_id, image (JPEG bytes), sha256 — pool order
    OUT/source_files.parquet    coco_image_id, file_name, sha256 of every source file the plan uses
    OUT/render_info.json        render settings, Pillow/libjpeg versions, plan hash, counts

Interrupted renders resume: finished grids are kept in ``OUT.partial/<key>/`` (the key hashes
the plan and the pixel-affecting settings) and reused by the next run.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from PIL import __version__ as pillow_version
from PIL import features

from benchsmith.builders.mmneedle.arrow_columns import (
    int64_array,
    int64_values,
    list_lengths,
    list_values,
    string_array,
)
from benchsmith.builders.mmneedle.cell_cache import CellSpec, build_cell_cache, cache_shape
from benchsmith.builders.mmneedle.config import RenderConfig
from benchsmith.builders.mmneedle.plan_fingerprint import plan_fingerprint
from benchsmith.builders.mmneedle.render_pool import (
    RenderPool,
    SpillBatch,
    Spilled,
    StitchTask,
    render_engines,
    stitch_digest,
    stitch_to_spill,
)
from benchsmith.builders.mmneedle.render_workers import engine_setting, start_render_workers_early
from benchsmith.builders.mmneedle.stitched_writer import ROW_GROUP, write_stitched
from benchsmith.core.atomic import atomic_directory, atomic_write_json
from benchsmith.core.errors import BenchsmithError, SourceError
from benchsmith.core.executor import ExecutorConfig
from benchsmith.core.hashing import params_hash, sha256_file
from benchsmith.core.outputs import output_lock
from benchsmith.core.progress import log, progress_bar

SPILL_BATCH = 8  # images per worker task; divides ROW_GROUP
# batches the workers may stitch before the writer reads them: while it writes one row group
# (30 ms for 64 4x4 images) they stitch the next two instead of waiting for it (the default
# 2 x workers ran out in 8 ms: 0.42 -> 0.24 s to write 500 images); what waits is at most
# this many spill files in the page cache
SPILL_AHEAD = 3 * (ROW_GROUP // SPILL_BATCH)


def image_library_versions() -> dict[str, str | None]:
    return {
        "pillow": pillow_version,
        "libjpeg": features.version("jpg"),
        "libjpeg_turbo": features.version("libjpeg_turbo"),
    }


def _read_plan(plan_dir: Path) -> tuple[dict[str, Any], pa.Table, dict[int, pa.Table]]:
    """The plan's info, images and pools, read with pyarrow: the render writes with it
    anyway, and polars would add 0.13-0.18 s to every render's start-up."""
    info_path = plan_dir / "plan_info.json"
    if not info_path.is_file():
        raise BenchsmithError(
            "not an MMNeedle plan folder (no plan_info.json)",
            path=plan_dir,
            fix="run `benchsmith build mmneedle plan` first",
        )
    info = json.loads(info_path.read_text(encoding="utf-8"))
    images = _plan_table(plan_dir / "images.parquet", ("coco_image_id", "file_name"))
    pools = {
        int(p.stem[1:]): _plan_table(p, ("stitched_id", "cells"))
        for p in sorted((plan_dir / "pools").glob("n*.parquet"))
    }
    return info, images, pools


def _plan_table(path: Path, columns: tuple[str, ...]) -> pa.Table:
    """One table of the plan, with the columns the render reads; a clear error naming the file
    when it is missing, not parquet, or written by something else."""
    fix = "the plan is damaged: run `benchsmith build mmneedle plan` again"
    try:  # ParquetFile.read, not read_table: read_table imports pandas (see arrow_columns)
        table = pq.ParquetFile(path).read()
    except (OSError, pa.ArrowException) as exc:
        raise BenchsmithError(f"cannot read this plan table ({exc})", path=path, fix=fix) from exc
    missing = [name for name in columns if name not in table.column_names]
    if missing:
        raise BenchsmithError(
            f"this plan table has no {', '.join(missing)} column", path=path, fix=fix
        )
    return table


def cell_image_ids(pool: pa.Table, grid: int, path: str | Path | None = None) -> np.ndarray:
    """The COCO id of every cell of a pool: one row per stitched image, ``grid * grid`` columns
    in the plan's (row-major) cell order.

    Read as one column rather than through ``to_list()``: a full 8x8 pool is 640,000 cell
    structs, and turning each into a dict took ~0.5 s of the parent's serial start-up, twice.
    """
    column = pool.column("cells").combine_chunks()
    lists = pa.types.is_list(column.type) or pa.types.is_large_list(column.type)
    cell = column.type.value_type if lists else None
    if cell is None or not pa.types.is_struct(cell) or cell.get_field_index("coco_image_id") < 0:
        raise BenchsmithError(
            "the pool's cells are not lists of cells with a coco_image_id",
            path=path or f"pools/n{grid}.parquet",
            fix="the plan is damaged: run `benchsmith build mmneedle plan` again",
        )
    ids = list_values(column).field("coco_image_id")
    cells = grid * grid
    if column.null_count or ids.null_count or (list_lengths(column) != cells).any():
        raise BenchsmithError(
            f"a stitched image of the {grid}x{grid} pool does not have {cells} cells",
            path=path or f"pools/n{grid}.parquet",
            fix="the plan is damaged: run `benchsmith build mmneedle plan` again",
        )
    return int64_values(ids).reshape(len(pool), cells)


def _write_source_files(
    path: Path, ids: list[int], file_of: dict[int, str], sha256_of: dict[int, str]
) -> None:
    """``source_files.parquet``: every source file of the plan, its COCO id and sha256."""
    table = pa.table(
        {
            "coco_image_id": int64_array(np.asarray(ids, dtype=np.int64)),
            "file_name": string_array([file_of[i] for i in ids]),
            "sha256": string_array([sha256_of[i] for i in ids]),
        }
    )
    pq.write_table(table, path, compression="zstd")  # as polars wrote it: a third the size


def _hash_files(paths: list[Path]) -> list[str]:
    hashes = []
    for path in paths:
        if not path.is_file():
            raise SourceError(
                "source image file is missing",
                path=path,
                fix="check --images points at the val2014 folder",
            )
        hashes.append(sha256_file(path))
    return hashes


def _write_grid(
    out_path: Path, ids: list[str], tasks: list[StitchTask], pool: RenderPool, spill_dir: Path
) -> None:
    """Stitch ``tasks`` into ``out_path`` on the local worker processes.

    Workers take batches of ``SPILL_BATCH`` images (small, so both stay busy to the end),
    write each batch's JPEGs into a file of its own in ``spill_dir`` and send back only offsets
    and digests; each file is read once (from the page cache) into its row group's buffer and
    deleted at once."""
    bar = progress_bar(
        total=len(tasks),
        desc=f"stitching {tasks[0].grid}x{tasks[0].grid}" if tasks else "stitching",
        unit="img",
    )
    spill_dir.mkdir(parents=True)
    batches = [
        SpillBatch(
            os.fspath(spill_dir), f"batch-{k:07d}.jpegs", tuple(tasks[start : start + SPILL_BATCH])
        )
        for k, start in enumerate(range(0, len(tasks), SPILL_BATCH))
    ]
    try:
        spilled = pool.imap(stitch_to_spill, batches, chunksize=1, ahead=SPILL_AHEAD)
        write_stitched(out_path, ids, (SpillRead(spill_dir, s) for s in spilled), bar)
    finally:
        shutil.rmtree(spill_dir, ignore_errors=True)
    bar.close()


@dataclass(frozen=True)
class SpillRead:
    """A spilled batch as the writer reads it: copied into place, then the file deleted (a
    file deleted seconds after it was written never reaches the disk)."""

    spill_dir: Path
    spilled: Spilled

    @property
    def offsets(self) -> tuple[int, ...]:
        return self.spilled.offsets

    @property
    def digests(self) -> tuple[str, ...]:
        return self.spilled.digests

    def read_into(self, view: memoryview) -> None:
        path = self.spill_dir / self.spilled.file
        with open(path, "rb", buffering=0) as handle:
            read = handle.readinto(view)
            extra = handle.read(1)
        path.unlink()
        if read != len(view) or extra:
            raise BenchsmithError(
                f"render spill file does not hold what its worker reported ({len(view)} bytes)",
                path=path,
                fix="check the disk is not full, then run the render again",
            )


def _render_locally(
    cfg: RenderConfig,
    sources: list[Path],
    spec: CellSpec,
    layouts: dict[int, list[tuple[int, ...]]],
    pools: dict[int, pa.Table],
    partial: Path,
) -> tuple[dict[str, str], list[str]]:
    """The pending grids on local worker processes, through a memory-mapped cell cache."""
    cache = partial / "cells.u8"
    try:  # finished grids survive a failure (resume); the cell cache never does
        with RenderPool(cfg.workers) as workers:
            engines = workers.call(render_engines, engine_setting(cfg))
            spec = spec.with_engines(engines, cfg.jpeg_quality)
            shape = cache_shape(len(sources), spec)
            bar = progress_bar(total=len(sources), desc="decoding sources", unit="img")
            _, hashes = build_cell_cache(sources, cache, spec, workers, bar.update)
            bar.close()
            for grid, images in layouts.items():
                tasks = [
                    StitchTask(
                        os.fspath(cache), shape, grid, cfg.jpeg_quality, cells, spec.tile_side
                    )
                    for cells in images
                ]
                _write_grid(
                    partial / f"n{grid}.parquet",
                    pools[grid].column("stitched_id").to_pylist(),
                    tasks,
                    workers,
                    partial / f"spill-n{grid}-{uuid.uuid4().hex[:8]}",
                )
    finally:
        cache.unlink(missing_ok=True)
    return engines, hashes


def render_mmneedle(
    plan_dir: str | Path,
    out_dir: str | Path,
    cfg: RenderConfig,
    images_dir: str | Path | None = None,
) -> dict[str, Any]:
    plan_dir, out_dir = Path(plan_dir), Path(out_dir)
    start_render_workers_early(cfg)  # the kernels load while the plan is read
    info, images, pools = _read_plan(plan_dir)
    images_dir = Path(images_dir or info.get("images_dir") or "")
    if not images_dir.is_dir():
        raise SourceError(
            "COCO images folder not found",
            path=images_dir,
            fix="pass --images pointing at val2014/",
        )
    file_of = dict(
        zip(
            images.column("coco_image_id").to_pylist(),
            images.column("file_name").to_pylist(),
            strict=True,
        )
    )
    cell_ids = {
        g: cell_image_ids(pools[g], g, plan_dir / "pools" / f"n{g}.parquet") for g in sorted(pools)
    }
    fingerprint = plan_fingerprint(plan_dir)
    key = params_hash({"plan": fingerprint, "render": cfg.identity()})[:16]
    partial_root = out_dir.parent / f"{out_dir.name}.partial"
    partial_root.parent.mkdir(parents=True, exist_ok=True)
    # the finished grids a second run would also write: one render at a time per output
    with output_lock(partial_root):
        partial = partial_root / key
        partial.mkdir(parents=True, exist_ok=True)

        pending = [g for g in sorted(pools) if not (partial / f"n{g}.parquet").is_file()]
        sorted_ids = np.unique(
            np.concatenate([np.empty(0, np.int64), *(i.ravel() for i in cell_ids.values())])
        )
        pool_ids: list[int] = sorted_ids.tolist()
        if pending:
            log(
                f"mmneedle render: {len(pool_ids)} source images -> "
                f"{sum(len(pools[g]) for g in pending)} stitched images, {cfg.workers} workers"
                + (" on Ray" if cfg.executor == "ray" else "")
            )
            spec = CellSpec(cfg.cell_size, cfg.resample, cfg.reducing_gap)
            sources = [images_dir / file_of[i] for i in pool_ids]
            # each cell's slot in the cell cache: its id's position among the sorted unique ids
            layouts = {
                g: list(map(tuple, np.searchsorted(sorted_ids, cell_ids[g]).tolist()))
                for g in pending
            }
            if cfg.executor == "ray":
                from benchsmith.builders.mmneedle.render_ray import render_on_ray

                engines, pool_hashes = render_on_ray(
                    ExecutorConfig("ray", cfg.workers),
                    sources,
                    spec,
                    cfg.jpeg_quality,
                    {g: (pools[g].column("stitched_id").to_pylist(), layouts[g]) for g in pending},
                    lambda g: partial / f"n{g}.parquet",
                )
            else:
                engines, pool_hashes = _render_locally(cfg, sources, spec, layouts, pools, partial)
            pool_hash = dict(zip(pool_ids, pool_hashes, strict=True))
        else:
            log(
                "mmneedle render: every grid already rendered for this plan and settings; reusing them"
            )
            pool_hash = {}
            engines = render_engines(engine_setting(cfg))
        all_ids = images.column("coco_image_id").to_pylist()
        missing = [i for i in all_ids if i not in pool_hash]
        pool_hash.update(
            zip(missing, _hash_files([images_dir / file_of[i] for i in missing]), strict=True)
        )

        render_info = {
            "family": "mmneedle",
            "render": cfg.identity(),
            "libraries": image_library_versions(),
            # each pair gives Pillow's bytes; recorded for the card
            "resize_engine": engines["resize"],
            "jpeg_engine": engines["jpeg"],
            "plan_fingerprint": fingerprint,
            "images_dir": str(images_dir),
            "stitched_images": {f"n{g}": len(pools[g]) for g in sorted(pools)},
            "source_images": len(all_ids),
        }
        with atomic_directory(out_dir, inputs=[plan_dir, images_dir]) as staging:
            (staging / "stitched").mkdir()
            for grid in sorted(pools):
                os.replace(partial / f"n{grid}.parquet", staging / "stitched" / f"n{grid}.parquet")
            _write_source_files(staging / "source_files.parquet", all_ids, file_of, pool_hash)
            atomic_write_json(staging / "render_info.json", render_info)
        shutil.rmtree(partial.parent, ignore_errors=True)
        return render_info


def stitched_digests(
    pools: dict[int, list[tuple[str, list[int]]]],
    file_of: dict[int, str],
    images_dir: Path,
    cfg: RenderConfig,
    scratch: Path,
) -> dict[str, str]:
    """sha256 of the JPEG of every stitched image in ``pools`` (grid -> [(stitched_id, cell
    COCO ids)]), rendered exactly as :func:`render_mmneedle` renders them (one cell cache,
    ``cfg.workers`` processes) but keeping only the digests: the whole-dataset audit re-renders
    every haystack without a second copy of the images. ``scratch`` holds the cell cache."""
    pool_ids = sorted({c for stitched in pools.values() for _, cells in stitched for c in cells})
    if not pool_ids:
        return {}
    scratch.mkdir(parents=True, exist_ok=True)
    cache = scratch / "cells.u8"
    spec = CellSpec(cfg.cell_size, cfg.resample, cfg.reducing_gap)
    slot = {image_id: k for k, image_id in enumerate(pool_ids)}
    digests: dict[str, str] = {}
    try:
        with RenderPool(cfg.workers) as workers:
            engines = workers.call(render_engines, engine_setting(cfg))
            spec = spec.with_engines(engines, cfg.jpeg_quality)
            shape = cache_shape(len(pool_ids), spec)
            bar = progress_bar(total=len(pool_ids), desc="audit: decoding sources", unit="img")
            build_cell_cache(
                [images_dir / file_of[i] for i in pool_ids], cache, spec, workers, bar.update
            )
            bar.close()
            for grid, stitched in sorted(pools.items()):
                tasks = [
                    StitchTask(
                        os.fspath(cache),
                        shape,
                        grid,
                        cfg.jpeg_quality,
                        tuple(slot[c] for c in cells),
                        spec.tile_side,
                    )
                    for _, cells in stitched
                ]
                bar = progress_bar(total=len(tasks), desc=f"audit: re-rendering {grid}x{grid}")
                results = workers.imap(stitch_digest, tasks, chunksize=4)
                for (sid, _), digest in zip(stitched, results, strict=True):
                    digests[sid] = digest
                    bar.update(1)
                bar.close()
    finally:
        cache.unlink(missing_ok=True)
    return digests
