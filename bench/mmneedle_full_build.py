"""The whole MMNeedle build at full scale, step by step, against the decode + encode floor.

Why: the paper's benchmark is 4 pools of 10,000 stitched images (1x1 to 8x8 cells of 256 px, so
up to 2048 px) over the 40,504 COCO val images, and 21 configs of 10,000 samples. Each step has
its own benchmark; this one runs them together, as ``dvc repro`` would, to show the wall time
and memory of a real build on this machine:

* **ours**: ``benchsmith build mmneedle plan``, ``render`` and ``benchsmith publish mmneedle``,
  each a fresh process, with the wall time and the peak RSS of its whole process tree (the
  command plus its forkserver and workers: PSS and anonymous memory of every process in the
  tree, summed, sampled every 0.2 s). Target: the three steps under 15 minutes on 2 cores.
* **floors**, one per step, measured in the same run after the build (target: the build
  within 1.3x their sum):

  - **render**: the work no render can avoid: decode every source image once and encode
    every stitched image once. Measured per unit on one core (``--floor-sample`` sources and
    outputs per grid, decoded and encoded exactly as the render does) and multiplied out over
    the full counts, divided by the cores;
  - **plan**: read its input once (``json.load`` of the captions file) and write its output
    once (the plan folder's bytes copied);
  - **publish**: read the stitched images once, write them once and hash them once (the
    Croissant file must give every shard's sha256), in 8 MiB blocks through one buffer: the
    render's stitched files copied, scaled to the published folder's size.

Source: ``synthetic_coco.write_synthetic_coco`` with 40,504 images and five captions each;
photo-like 640x480 JPEGs (quality 90, ~165 KB), of which ``--distinct`` (default 2,000) are
drawn and the rest hard-linked to them (drawing 40,504 takes ~15 min; decoding a link costs
the same as decoding a file). Needs ~25 GB free disk for the render and the published
dataset. Run ``python bench/mmneedle_full_build.py`` (~13 min on 2 cores; ``--scale 0.1``:
pools and samples of 1,000, ~5 min: every source is still decoded). Results go to ``bench/results/mmneedle_full_build.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from process_tree import run_measured
from synthetic_coco import machine_info, mark, print_table, write_result, write_synthetic_coco

NAME = "mmneedle_full_build"
TARGET_S = 15 * 60
BUILD_OVER_FLOORS_TARGET = 1.3
GRIDS = (1, 2, 4, 8)
CELL = 256
QUALITY = 75


def run_step(name: str, command: list[str], env: dict[str, str]) -> dict:
    """Run one CLI step; wall time and the peak memory of its process tree."""
    measured = run_measured(command, env=env)
    if measured.returncode:
        raise SystemExit(f"{name} failed:\n{measured.stderr[-3000:]}")
    print(
        f"  {name}: {measured.wall_s:.1f} s, peak tree PSS {measured.peak_tree_pss_mib:.0f} MiB "
        f"(anonymous {measured.peak_tree_anon_mib:.0f} MiB)",
        flush=True,
    )
    return {
        "wall_s": measured.wall_s,
        "peak_tree_pss_mib": measured.peak_tree_pss_mib,
        "peak_tree_anon_mib": measured.peak_tree_anon_mib,
        "command": command[3:],
    }


def floor_costs(images_dir: Path, names: list[str], sample: int) -> dict[str, float]:
    """One-core ms per decode (full size, as the bare render) and per encode, per grid."""
    import numpy as np
    from PIL import Image

    from benchsmith.builders.mmneedle.stitching import encode_jpeg, load_cell

    decode = []
    for name in names[:sample]:
        start = time.perf_counter()
        with Image.open(images_dir / name) as image:
            image.load()
        decode.append(time.perf_counter() - start)
    cells = [load_cell(images_dir / name, CELL)[0] for name in names[:64]]
    costs = {"decode_ms": statistics.median(decode) * 1e3}
    rng = np.random.default_rng(0)
    for grid in GRIDS:
        side = grid * CELL
        encode = []
        for _ in range(max(4, sample // grid)):
            canvas = np.zeros((side, side, 3), dtype=np.uint8)
            for k, pick in enumerate(rng.integers(0, len(cells), size=grid * grid)):
                row, col = divmod(k, grid)
                canvas[row * CELL : (row + 1) * CELL, col * CELL : (col + 1) * CELL] = cells[pick]
            image = Image.fromarray(canvas, "RGB")
            start = time.perf_counter()
            encode_jpeg(image, QUALITY)
            encode.append(time.perf_counter() - start)
        costs[f"encode_n{grid}_ms"] = statistics.median(encode) * 1e3
    return costs


def copy_seconds(files: list[Path], scratch: Path, hash_too: bool) -> float:
    """Read every file once and write it once (and sha256 it, with ``hash_too``) in 8 MiB
    blocks through one reused buffer; the copies are deleted afterwards, untimed."""
    buffer = bytearray(8 << 20)
    view = memoryview(buffer)
    copies = []
    start = time.perf_counter()
    for index, path in enumerate(files):
        digest = hashlib.sha256()
        copy = scratch / f"floor-copy-{index}"
        copies.append(copy)
        with open(path, "rb", buffering=0) as source, open(copy, "xb", buffering=0) as target:
            while read := source.readinto(buffer):
                if hash_too:
                    digest.update(view[:read])
                target.write(view[:read])
    elapsed = time.perf_counter() - start
    for copy in copies:
        copy.unlink()
    return elapsed


def plan_floor_s(captions: Path, plan: Path, scratch: Path) -> float:
    """Parse the plan's one input and write its output's bytes once."""
    start = time.perf_counter()
    with open(captions, "rb") as handle:
        json.load(handle)
    parsed = time.perf_counter() - start
    return parsed + copy_seconds(sorted(p for p in plan.rglob("*") if p.is_file()), scratch, False)


def publish_floor_s(render: Path, published_bytes: int, scratch: Path) -> float:
    """Copy and hash the stitched images (what publish must read, write and hash), scaled to
    the published folder's size (the sample configs and provenance add a little)."""
    stitched = sorted((render / "stitched").glob("*.parquet"))
    size = sum(p.stat().st_size for p in stitched)
    return copy_seconds(stitched, scratch, True) * published_bytes / size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=40_504, help="COCO images in the source")
    parser.add_argument("--distinct", type=int, default=2_000, help="distinct photos drawn")
    parser.add_argument("--scale", type=float, default=1.0, help="pools and samples x this")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--floor-sample", type=int, default=200, help="units timed per floor cost")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    args = parser.parse_args(argv)
    size = max(1, round(10_000 * args.scale))
    env = {**os.environ, "BENCHSMITH_PROGRESS": "0"}
    cli = [sys.executable, "-m", "benchsmith"]
    with tempfile.TemporaryDirectory(prefix="bench-full-build-", dir=args.work) as scratch:
        root = Path(scratch)
        start = time.perf_counter()
        coco = write_synthetic_coco(
            root / "coco", args.images, captions_per_image=5, distinct_images=args.distinct
        )
        print(
            f"source: {args.images:,} images ({args.distinct:,} distinct) in "
            f"{time.perf_counter() - start:.0f} s; pools and samples of {size:,}; "
            f"{args.workers} workers",
            flush=True,
        )
        plan, render, published = root / "plan", root / "render", root / "published"
        steps = {
            "plan": run_step(
                "plan",
                [*cli, "build", "mmneedle", "plan", "--captions", str(coco.captions_path),
                 "--images", str(coco.images_dir), "--pool-size", str(size),
                 "--samples", str(size), "--out", str(plan)],
                env,
            ),
            "render": run_step(
                "render",
                [*cli, "build", "mmneedle", "render", str(plan), "--images",
                 str(coco.images_dir), "--workers", str(args.workers), "--out", str(render)],
                env,
            ),
            "publish": run_step(
                "publish",
                [*cli, "publish", "mmneedle", str(plan), "--render", str(render),
                 "--out", str(published), "--version", "1.0.0"],
                env,
            ),
        }  # fmt: skip
        published_bytes = sum(p.stat().st_size for p in published.rglob("*") if p.is_file())
        render_bytes = sum(p.stat().st_size for p in render.rglob("*") if p.is_file())
        import polars as pl

        sources = pl.read_parquet(render / "source_files.parquet")["file_name"].to_list()
        costs = floor_costs(coco.images_dir, sources, args.floor_sample)
        floor_plan = plan_floor_s(coco.captions_path, plan, root)
        floor_publish = publish_floor_s(render, published_bytes, root)
    n_sources = len(sources)
    floor_cpu_s = (
        n_sources * costs["decode_ms"] + sum(size * costs[f"encode_n{g}_ms"] for g in GRIDS)
    ) / 1e3
    floor_s = floor_cpu_s / max(1, min(args.workers, os.cpu_count() or 1))
    total = sum(step["wall_s"] for step in steps.values())
    floors = {"plan": floor_plan, "render": floor_s, "publish": floor_publish}
    floor_total = sum(floors.values())
    result = {
        "images": args.images,
        "distinct_images": args.distinct,
        "pool_size": size,
        "samples_per_config": size,
        "workers": args.workers,
        "steps": steps,
        "total_s": total,
        "peak_tree_pss_mib": max(step["peak_tree_pss_mib"] for step in steps.values()),
        "peak_tree_anon_mib": max(step["peak_tree_anon_mib"] for step in steps.values()),
        "render_bytes": render_bytes,
        "published_bytes": published_bytes,
        "source_images_rendered": n_sources,
        "floor_costs_ms": costs,
        "floor_render_s": floor_s,
        "render_over_floor": steps["render"]["wall_s"] / floor_s,
        "floors_s": floors,
        "over_floor": {name: steps[name]["wall_s"] / floors[name] for name in floors},
        "build_over_floors": total / floor_total,
        "build_over_floors_target": BUILD_OVER_FLOORS_TARGET,
        "target_s": TARGET_S,
        "machine": machine_info(),
    }
    rows = [
        [
            name,
            f"{s['wall_s']:.1f}",
            f"{floors[name]:.1f}",
            f"{s['wall_s'] / floors[name]:.2f}x",
            f"{s['peak_tree_pss_mib']:.0f}",
            f"{s['peak_tree_anon_mib']:.0f}",
        ]
        for name, s in steps.items()
    ]
    rows.append(
        [
            "total",
            f"{total:.1f}",
            f"{floor_total:.1f}",
            f"{total / floor_total:.2f}x",
            f"{result['peak_tree_pss_mib']:.0f}",
            f"{result['peak_tree_anon_mib']:.0f}",
        ]
    )
    print_table(
        ["step", "seconds", "floor s", "/ floor", "peak tree PSS MiB", "anonymous MiB"], rows
    )
    full = size == 10_000 and args.images == 40_504
    print(
        f"floors: plan = parse the captions + copy the plan; render = decode {n_sources:,} + "
        f"encode {4 * size:,} on {args.workers} cores; publish = copy + sha256 the stitched "
        f"images, scaled to the published size\n"
        f"build / floors {total / floor_total:.2f}x (target <= {BUILD_OVER_FLOORS_TARGET}x: "
        f"{mark(total / floor_total <= BUILD_OVER_FLOORS_TARGET)}); render "
        f"{render_bytes / 2**30:.1f} GiB, published {published_bytes / 2**30:.1f} GiB; under "
        f"15 min: {mark(total < TARGET_S) if full else 'n/a (not full scale)'}"
    )
    print(f"wrote {write_result(NAME if full else NAME + '_scaled', result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
