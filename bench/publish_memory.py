"""Publish memory: peak RSS of ``publish_mmneedle`` on 10,000 stitched 1024 px images.

Why: the published haystack config holds every stitched JPEG (~2.8 GiB for a 10,000-image 4x4
pool). ``publish_mmneedle`` streams: it reads the render parquet in batches and writes
row groups as it goes, so memory should stay bounded by a batch, not by the dataset. The
obvious implementation (collect every row, ``datasets.Dataset.from_dict``, ``to_parquet``)
holds the whole config in memory, several times over. This script measures both, side by
side, each in a fresh subprocess so that neither inherits the other's heap:

* **ours**: ``publish_mmneedle(plan, render, out, version)``; target peak RSS < 1 GiB.
* **baseline_datasets**: the same rows (built by the same ``haystack_batches``) loaded all at
  once with ``Dataset.from_dict(..., features=HAYSTACK_FEATURES).to_parquet(...)``. At 10,000
  images it fails (``from_dict`` fingerprints the table by concatenating the image column into
  one array, whose 32-bit offsets overflow past 2 GiB); the failure and the peak RSS reached
  are reported.
* **baseline_arrow**: the same rows in one in-memory ``pyarrow`` table and one
  ``pq.write_table``: the naive approach that does complete.
* **imports**: a subprocess that only imports what the others need, i.e. the fixed floor.

Peak RSS is the child's own ``VmHWM``, read by the child as it finishes (``ru_maxrss`` from
``os.wait4`` is kept as ``ru_maxrss_bytes``: on Linux it includes the parent's high-water mark
at fork time, so it overstated the children's peaks before 2026-11-24).

The render folder is faked rather than rendered (rendering 10,000 images would take
minutes): it follows the layout ``render_mmneedle`` writes (stitched/n4.parquet with
stitched_id, image, sha256 in pool order; source_files.parquet; render_info.json with the
plan fingerprint), and cycles 16 distinct real 1024x1024 JPEGs (~300 KB, photo-like noise)
over the rows, each tagged with a unique JPEG comment so that no two rows have equal bytes
(as in a real render), written in row groups of 64 like the real render so the input is
streamable.

Run ``python bench/publish_memory.py`` (10,000 images, about 2 minutes) or ``--quick``
(1,000 images). Results go to ``bench/results/publish_memory.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from synthetic_coco import (
    available_memory_bytes,
    jpeg_bytes,
    machine_info,
    mark,
    own_peak_rss_bytes,
    photo_like,
    print_table,
    write_result,
    write_synthetic_coco,
)

NAME = "publish_memory"
GRID = 4
DISTINCT_IMAGES = 16
IMAGE_SIDE = 1024
RSS_TARGET_BYTES = 1024**3
BASELINE_MEMORY_FACTOR = 3.0  # naive peak RSS / image bytes is ~2.5 (measured), plus margin
ROW_GROUP = 64  # as benchsmith.builders.mmneedle.stitched_writer.ROW_GROUP


# --- setup: plan + fake render ------------------------------------------------------------


def make_plan(work: Path, n_rows: int) -> tuple[Path, Path]:
    """A real plan (``plan_mmneedle`` + ``write_plan``) on a small synthetic COCO source."""
    from benchsmith.builders.mmneedle.config import PlanConfig
    from benchsmith.builders.mmneedle.plan import plan_mmneedle, write_plan
    from benchsmith.sources.coco.reader import read_captions

    coco = write_synthetic_coco(work / "coco", 64, size=(64, 48), noise=8.0)
    source = read_captions(coco.captions_path)
    config = PlanConfig(
        order="canonical",
        grids=(GRID,),
        haystack_sizes=(1,),
        needle_counts=(1,),
        pool_size=n_rows,
        samples_per_config=10,
        seed=0,
    )
    plan_dir = work / "plan"
    write_plan(plan_mmneedle(source, config), source, plan_dir, coco.images_dir)
    return plan_dir, coco.images_dir


def tag_jpeg(data: bytes, tag: str) -> bytes:
    """The same JPEG with a unique COM (comment) segment right after SOI.

    Decodes to the same pixels, but every row's bytes differ. Without it, parquet's
    dictionary encoding stores 16 cycled images once per row group and the published size
    (and the writer's work) shrinks to half of what 10,000 distinct renders would give.
    """
    payload = f"benchsmith bench {tag}".encode()
    return data[:2] + b"\xff\xfe" + (len(payload) + 2).to_bytes(2, "big") + payload + data[2:]


def fake_render(plan_dir: Path, images_dir: Path, render_dir: Path) -> int:
    """A render folder consistent with the plan, without rendering; returns its image bytes.

    Same files, schema, row order and render_info.json as ``render_mmneedle``, so
    ``publish_mmneedle`` accepts it (it checks the plan fingerprint) and does exactly the
    work it does after a real render.
    """
    import polars as pl
    import pyarrow as pa
    import pyarrow.parquet as pq

    from benchsmith.builders.mmneedle.config import RenderConfig
    from benchsmith.builders.mmneedle.render import image_library_versions, plan_fingerprint
    from benchsmith.builders.mmneedle.stitched_writer import STITCHED_SCHEMA
    from benchsmith.core.hashing import sha256_file

    rng = np.random.default_rng(0)
    jpegs = [
        jpeg_bytes(photo_like(rng, IMAGE_SIDE, IMAGE_SIDE, noise=24.0), 75)
        for _ in range(DISTINCT_IMAGES)
    ]
    ids = pl.read_parquet(plan_dir / "pools" / f"n{GRID}.parquet")["stitched_id"].to_list()
    (render_dir / "stitched").mkdir(parents=True)
    total = 0
    with pq.ParquetWriter(
        render_dir / "stitched" / f"n{GRID}.parquet", STITCHED_SCHEMA, compression="none"
    ) as writer:
        for start in range(0, len(ids), ROW_GROUP):
            chunk = ids[start : start + ROW_GROUP]
            images = [
                tag_jpeg(jpegs[(start + k) % DISTINCT_IMAGES], stitched_id)
                for k, stitched_id in enumerate(chunk)
            ]
            total += sum(len(b) for b in images)
            writer.write_table(
                pa.table(
                    {
                        "stitched_id": chunk,
                        "image": images,
                        "sha256": [hashlib.sha256(b).hexdigest() for b in images],
                    },
                    schema=STITCHED_SCHEMA,
                )
            )
    images = pl.read_parquet(plan_dir / "images.parquet")
    pl.DataFrame(
        {
            "coco_image_id": images["coco_image_id"],
            "file_name": images["file_name"],
            "sha256": [sha256_file(images_dir / name) for name in images["file_name"]],
        },
        schema={"coco_image_id": pl.Int64, "file_name": pl.String, "sha256": pl.String},
    ).write_parquet(render_dir / "source_files.parquet")
    info = {
        "family": "mmneedle",
        "render": RenderConfig().identity(),
        "libraries": image_library_versions(),
        "plan_fingerprint": plan_fingerprint(plan_dir),
        "images_dir": str(images_dir),
        "stitched_images": {f"n{GRID}": len(ids)},
        "source_images": images.height,
    }
    (render_dir / "render_info.json").write_text(json.dumps(info, indent=2), encoding="utf-8")
    return total


# --- the measured children ----------------------------------------------------------------


def child_ours(plan_dir: str, render_dir: str, out_dir: str) -> dict[str, Any]:
    from benchsmith.builders.mmneedle.publication import MmneedlePublication
    from benchsmith.publish.publisher import publish

    info = publish(MmneedlePublication(plan_dir, render_dir), out_dir, "0.0.0-bench")
    return {
        "rows": info["configs"][f"haystacks_n{GRID}"]["test"]["num_examples"],
        "configs": sorted(info["configs"]),
    }


def _all_rows(plan_dir: str, render_dir: str) -> list[dict[str, Any]]:
    """Every haystack row at once, built by the same generator ours streams from."""
    from benchsmith.builders.mmneedle.publication import BuildInputs, haystack_batches

    inputs = BuildInputs.read(plan_dir, render_dir)
    # the rows as dicts, as a naive publish holds them (each batch is a table)
    return [row for batch in haystack_batches(inputs, GRID) for row in batch.to_pylist()]


def _target(out_dir: str) -> Path:
    from benchsmith.builders.mmneedle.features import haystack_config

    target = Path(out_dir) / "data" / haystack_config(GRID) / "test-00000.parquet"
    target.parent.mkdir(parents=True, exist_ok=True)
    return target


def child_baseline_datasets(plan_dir: str, render_dir: str, out_dir: str) -> dict[str, Any]:
    """The naive publish with ``datasets``: all rows in memory, ``from_dict``, ``to_parquet``.

    Same rows as ours, so the difference is only streaming. A failure is a result too (past
    2 GiB of image bytes ``from_dict`` overflows the 32-bit binary offsets while
    fingerprinting the table), so it is reported rather than raised.
    """
    import datasets
    import pyarrow as pa

    from benchsmith.builders.mmneedle.features import HAYSTACK_FEATURES

    rows = _all_rows(plan_dir, render_dir)
    columns = {name: [row[name] for row in rows] for name in HAYSTACK_FEATURES}
    try:
        dataset = datasets.Dataset.from_dict(columns, features=HAYSTACK_FEATURES)
    except pa.ArrowInvalid as exc:
        return {"rows": 0, "error": f"Dataset.from_dict: ArrowInvalid: {exc}"}
    dataset.to_parquet(str(_target(out_dir)))
    return {"rows": len(dataset)}


def child_baseline_arrow(plan_dir: str, render_dir: str, out_dir: str) -> dict[str, Any]:
    """The naive publish with plain pyarrow: all rows in one in-memory table, one write."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from benchsmith.builders.mmneedle.features import HAYSTACK_FEATURES

    table = pa.Table.from_pylist(
        _all_rows(plan_dir, render_dir), schema=HAYSTACK_FEATURES.arrow_schema
    )
    pq.write_table(table, _target(out_dir), compression="zstd")
    return {"rows": table.num_rows}


def child_imports(plan_dir: str, render_dir: str, out_dir: str) -> dict[str, Any]:
    """Only the imports both sides need: the part of the peak that no streaming can remove."""
    import datasets  # noqa: F401

    import benchsmith.builders.mmneedle.publication  # noqa: F401

    return {}


CHILDREN = {
    "ours": child_ours,
    "baseline_datasets": child_baseline_datasets,
    "baseline_arrow": child_baseline_arrow,
    "imports": child_imports,
}


def run_child(kind: str, plan_dir: Path, render_dir: Path, out_dir: Path) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter; peak RSS from the kernel when it is reaped."""
    cmd = [sys.executable, __file__, "--child", kind, str(plan_dir), str(render_dir), str(out_dir)]
    with tempfile.TemporaryFile() as stdout:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=stdout)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        stdout.seek(0)
        output = stdout.read().decode("utf-8", "replace")
    if proc.returncode != 0:
        raise RuntimeError(f"{kind} child failed with exit code {proc.returncode}:\n{output}")
    reply = json.loads(output.strip().splitlines()[-1])
    return {
        "peak_rss_bytes": reply.pop("own_peak_rss_bytes"),  # the child's own VmHWM
        # what wait4 reports: includes the parent's high-water mark at fork (kept to compare)
        "ru_maxrss_bytes": usage.ru_maxrss * 1024,
        "wall_s": wall,
        "inner_s": reply.pop("seconds"),
        # Max over every child reaped so far (not per child): kept to cross-check wait4.
        "rusage_children_max_bytes": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
        **reply,
    }


def child_main(kind: str, plan_dir: str, render_dir: str, out_dir: str) -> int:
    start = time.perf_counter()
    reply = CHILDREN[kind](plan_dir, render_dir, out_dir)
    reply["seconds"] = time.perf_counter() - start
    reply["own_peak_rss_bytes"] = own_peak_rss_bytes()
    print(json.dumps(reply), flush=True)
    return 0


# --- driver -------------------------------------------------------------------------------


def folder_bytes(folder: Path, pattern: str = "**/*.parquet") -> int:
    return sum(p.stat().st_size for p in folder.glob(pattern) if p.is_file())


def check_load(out_dir: Path, cache_dir: Path) -> dict[str, Any]:
    """What a user does first: ``load_dataset(out, "haystacks_n4", split="test")``."""
    import datasets

    start = time.perf_counter()
    ds = datasets.load_dataset(
        str(out_dir), f"haystacks_n{GRID}", split="test", cache_dir=str(cache_dir)
    )
    first = ds[0]["image"]
    return {
        "rows": len(ds),
        "first_image_size": list(first.size),
        "seconds": time.perf_counter() - start,
    }


def gb(n: float) -> str:
    return f"{n / 1024**3:.2f} GiB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1,000 images instead of 10,000")
    parser.add_argument("--rows", type=int, help="number of stitched images (overrides --quick)")
    parser.add_argument("--keep", type=Path, help="work folder to keep (default: a temp dir)")
    args = parser.parse_args(argv)
    os.environ.setdefault("BENCHSMITH_PROGRESS", "0")
    n_rows = args.rows or (1_000 if args.quick else 10_000)
    print(f"publish memory: {n_rows} stitched {IMAGE_SIDE} px images (grid {GRID}x{GRID})")

    with tempfile.TemporaryDirectory(prefix="bench-publish-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        plan_dir, images_dir = make_plan(work, n_rows)
        input_bytes = fake_render(plan_dir, images_dir, work / "render")
        print(
            f"setup: plan + fake render ({gb(input_bytes)} of JPEGs) in "
            f"{time.perf_counter() - start:.1f}s"
        )

        # ours first: nothing has been reaped before it, so RUSAGE_CHILDREN is its own peak.
        runs: dict[str, dict[str, Any]] = {}
        available = available_memory_bytes()
        for kind in CHILDREN:
            out_dir = work / f"out_{kind}"
            if kind.startswith("baseline") and available is not None:
                # The naive runs hold ~2.5x the image bytes; skip rather than get OOM-killed.
                need = int(BASELINE_MEMORY_FACTOR * input_bytes) + 1024**3
                if available < need:
                    print(f"skipping {kind}: needs ~{gb(need)}, {gb(available)} available")
                    runs[kind] = {"skipped": f"needs ~{need} bytes, {available} available"}
                    continue
            print(f"running {kind} in a fresh subprocess ...", flush=True)
            runs[kind] = run_child(kind, plan_dir, work / "render", out_dir)
            runs[kind]["published_bytes"] = folder_bytes(out_dir) if out_dir.exists() else 0
            if kind != "ours" and out_dir.exists():
                shutil.rmtree(out_dir)  # free the disk before load_dataset's cache copy
        out_dir = work / "out_ours"
        total_bytes = sum(p.stat().st_size for p in out_dir.rglob("*") if p.is_file())
        shards = sorted(out_dir.glob(f"data/haystacks_n{GRID}/*.parquet"))
        loaded = check_load(out_dir, work / "hf_cache")

    ours, floor = runs["ours"], runs["imports"]
    rss_ok = ours["peak_rss_bytes"] < RSS_TARGET_BYTES
    rows_ok = loaded["rows"] == n_rows
    print()
    print_table(
        ["run", "peak RSS", "above imports", "x ours", "wall s", "rows", "published parquet"],
        [
            [
                kind,
                gb(r["peak_rss_bytes"]),
                gb(r["peak_rss_bytes"] - floor["peak_rss_bytes"]),
                f"{r['peak_rss_bytes'] / ours['peak_rss_bytes']:.1f}x",
                f"{r['wall_s']:.1f}",
                r.get("rows", "-"),
                gb(r["published_bytes"]),
            ]
            for kind, r in runs.items()
            if "skipped" not in r
        ],
    )
    for kind, r in runs.items():
        if "error" in r:
            print(f"\n{kind} FAILED (peak RSS above is at the failure): {r['error']}")
        if "skipped" in r:
            print(f"\n{kind} skipped: {r['skipped']}")
    print(
        f"\nours peak RSS {gb(ours['peak_rss_bytes'])} (target < {gb(RSS_TARGET_BYTES)}): "
        f"{mark(rss_ok)}"
    )
    # Whether memory scales with the input shows even in --quick, where the 1 GiB target is
    # too loose to catch it: a streaming publish holds a few batches, not a share of the input.
    held = ours["peak_rss_bytes"] - floor["peak_rss_bytes"]
    print(f"ours: RSS above the import floor = {held / input_bytes:.0%} of the input images")
    for kind in ("baseline_datasets", "baseline_arrow"):
        r = runs[kind]
        if "skipped" in r:
            continue
        status = "FAILED" if "error" in r else "completed"
        print(
            f"{kind} ({status}) peak RSS {gb(r['peak_rss_bytes'])}: "
            f"{r['peak_rss_bytes'] / ours['peak_rss_bytes']:.1f}x ours"
        )
    print(
        f"RUSAGE_CHILDREN after ours: {gb(ours['rusage_children_max_bytes'])} "
        f"(same as wait4: {ours['rusage_children_max_bytes'] == ours['peak_rss_bytes']})"
    )
    print(
        f"published: {total_bytes:,} bytes in total, {len(shards)} haystack shard(s); input "
        f"JPEGs {input_bytes:,} bytes"
    )
    print(
        f"load_dataset(out, 'haystacks_n{GRID}', split='test'): {loaded['rows']} rows "
        f"(expected {n_rows}) {mark(rows_ok)}, first image {loaded['first_image_size']}"
    )
    path = write_result(
        NAME,
        {
            "benchmark": NAME,
            "quick": args.quick,
            "rows": n_rows,
            "grid": GRID,
            "input_image_bytes": input_bytes,
            "target_peak_rss_bytes": RSS_TARGET_BYTES,
            "runs": runs,
            "peak_rss_pass": rss_ok,
            "rss_ratio_over_ours": {
                kind: r["peak_rss_bytes"] / ours["peak_rss_bytes"]
                for kind, r in runs.items()
                if "peak_rss_bytes" in r
            },
            "published_total_bytes": total_bytes,
            "haystack_shards": len(shards),
            "load_dataset": loaded,
            "load_dataset_rows_pass": rows_ok,
            "machine": machine_info(),
        },
    )
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        sys.exit(child_main(*sys.argv[2:]))
    sys.exit(main())
