"""MMNeedle plan at full scale: the command against the plain-Python planner, in one run.

Why: the plan draws 210,000 samples (21 configs x 10,000) from pools of 10,000 stitched images
over 40,504 COCO images. Written one sample at a time with sets and counters it took minutes;
the compiled sampler (``canonical_kernel`` on ``core/rng_kernel``, which replays NumPy's
generator bit for bit) and the column-built tables should make it seconds, with plans that
are byte-identical to the slow ones. This script checks both claims:

* **ours**: ``benchsmith build mmneedle plan`` (the real command, imports included) in a fresh
  process per round: the median of ``--rounds`` and their spread, the child's peak RSS, and
  once more with an empty numba cache (``NUMBA_CACHE_DIR``) to show the one-time compile a
  fresh checkout pays (the timed rounds follow one untimed warm-up run that fills the default
  cache). Target: under 20 s on 2 cores.
* **baseline**: the planner as first written (``tests/mmneedle_plan_reference.py``: the rules
  with Python sets, ``Counter`` and one NumPy ``Generator`` per sample, then one dict per
  row into ``pl.DataFrame``), run once in this process on the same captions.
* **check**: every parquet file of the two plans byte for byte, and the per-config QA
  counts; the canonical guarantees themselves are tested in ``tests/builders/mmneedle``.

Source: a synthetic captions file in the real COCO format with 40,504 images and five
captions each (two of the image's own, three scene phrases many images share, as COCO's
captions often repeat). Run ``python bench/plan_speed.py`` (about 4 min, most of it the
baseline; ``--quick``: pools of 2,000 and 1,000 samples per config, ~1 min). Results go to
``bench/results/plan_speed.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from synthetic_coco import machine_info, mark, print_table, write_result, write_synthetic_coco

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the plain-Python planner lives with the tests
NAME = "plan_speed"
TARGET_S = 20.0


def run_command(captions: Path, out: Path, pool: int, samples: int, env: dict) -> dict:
    """One ``benchsmith build mmneedle plan`` in a fresh process: wall time and peak RSS."""
    script = (
        "import resource, subprocess, sys, time\n"
        "start = time.perf_counter()\n"
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)\n"
        "wall = time.perf_counter() - start\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(wall, rss)\n"
    )
    command = [sys.executable, "-m", "benchsmith", "build", "mmneedle", "plan"]
    command += ["--captions", str(captions), "--pool-size", str(pool)]
    command += ["--samples", str(samples), "--out", str(out)]
    done = subprocess.run(
        [sys.executable, "-c", script, *command], capture_output=True, text=True, env=env
    )
    if done.returncode:
        raise SystemExit(f"plan failed:\n{done.stderr[-2000:]}")
    wall, rss_kib = done.stdout.split()
    return {"wall_s": float(wall), "peak_rss_mib": int(rss_kib) / 1024}


def run_baseline(captions: Path, out: Path, pool_size: int, samples: int) -> float:
    """The plain-Python planner and row builder, writing the same tables as the command."""
    import polars as pl
    from mmneedle_plan_reference import (
        reference_pool_rows,
        reference_sample_rows,
        reference_samples,
    )

    from benchsmith.builders.mmneedle.candidates import Candidates
    from benchsmith.builders.mmneedle.config import PlanConfig
    from benchsmith.builders.mmneedle.plan import POOL_SCHEMA, SAMPLE_SCHEMA, Plan
    from benchsmith.builders.mmneedle.pools import build_pool
    from benchsmith.sources.coco.reader import read_captions

    start = time.perf_counter()
    config = PlanConfig(pool_size=pool_size, samples_per_config=samples)
    source = read_captions(captions)
    cands = Candidates.from_captions(source, config.order)
    pools = {
        g: build_pool(config.order, len(cands), g, pool_size, config.seed) for g in config.grids
    }
    stats: Counter = Counter()
    drafted = {
        s.name: reference_samples(s, pools[s.grid], cands, samples, config.seed, stats)
        for s in config.settings()
    }
    plan = Plan(config, cands, pools, drafted, stats)
    (out / "pools").mkdir(parents=True)
    (out / "samples").mkdir()
    for grid in pools:
        frame = pl.DataFrame(reference_pool_rows(plan, grid), schema=POOL_SCHEMA)
        frame.write_parquet(out / "pools" / f"n{grid}.parquet")
    for setting in config.settings():
        frame = pl.DataFrame(reference_sample_rows(plan, setting), schema=SAMPLE_SCHEMA)
        frame.write_parquet(out / "samples" / f"{setting.name}.parquet")
    return time.perf_counter() - start


def compare_tables(ours: Path, baseline: Path) -> dict[str, int]:
    files = sorted(p.relative_to(baseline) for p in baseline.rglob("*.parquet"))
    differing = [str(f) for f in files if (ours / f).read_bytes() != (baseline / f).read_bytes()]
    return {"files": len(files), "differing": len(differing), "differing_files": differing}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=40_504, help="COCO images in the pool")
    parser.add_argument("--pool-size", type=int, default=10_000)
    parser.add_argument("--samples", type=int, default=10_000, help="samples per config")
    parser.add_argument("--rounds", type=int, default=3, help="timed runs of the command")
    parser.add_argument("--quick", action="store_true", help="pools of 2,000, 1,000 samples")
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    args = parser.parse_args(argv)
    if args.quick:
        args.pool_size, args.samples = 2_000, 1_000
    with tempfile.TemporaryDirectory(prefix="bench-plan-", dir=args.work) as scratch:
        root = Path(scratch)
        coco = write_synthetic_coco(
            root / "coco", args.images, captions_per_image=5, write_images=False
        )
        print(
            f"plan: {args.images:,} images x 5 captions, pools of {args.pool_size:,}, "
            f"{args.samples:,} samples x 21 configs; {os.cpu_count()} cores"
        )
        env = {**os.environ, "BENCHSMITH_PROGRESS": "0"}
        cold = run_command(
            coco.captions_path,
            root / "cold",
            args.pool_size,
            args.samples,
            {**env, "NUMBA_CACHE_DIR": str(root / "numba-cache")},
        )
        run_command(coco.captions_path, root / "warm", args.pool_size, args.samples, env)
        rounds = [
            run_command(coco.captions_path, root / f"ours{r}", args.pool_size, args.samples, env)
            for r in range(args.rounds)
        ]
        baseline_s = run_baseline(
            coco.captions_path, root / "baseline", args.pool_size, args.samples
        )
        check = compare_tables(root / "ours0", root / "baseline")
        info = json.loads((root / "ours0" / "plan_info.json").read_text())
    times = [r["wall_s"] for r in rounds]
    median = statistics.median(times)
    result = {
        "images": args.images,
        "pool_size": args.pool_size,
        "samples_per_config": args.samples,
        "rounds_s": times,
        "median_s": median,
        "spread_s": [min(times), max(times)],
        "peak_rss_mib": max(r["peak_rss_mib"] for r in rounds),
        "cold_cache_s": cold["wall_s"],
        "baseline_s": baseline_s,
        "speedup": baseline_s / median,
        "byte_check": check,
        "plan_stats": info["stats"],
        "target_s": TARGET_S,
        "machine": machine_info(),
    }
    print_table(
        ["", "seconds", "peak RSS MiB", "note"],
        [
            ["ours (median)", f"{median:.1f}", f"{result['peak_rss_mib']:.0f}",
             f"spread {min(times):.1f}-{max(times):.1f}, {len(times)} rounds"],
            ["ours, empty numba cache", f"{cold['wall_s']:.1f}", f"{cold['peak_rss_mib']:.0f}",
             "one-time compile of the sampler"],
            ["baseline (plain Python)", f"{baseline_s:.1f}", "", "one run, this process"],
        ],
    )  # fmt: skip
    full = not args.quick and args.pool_size == 10_000 and args.samples == 10_000
    print(
        f"speedup {result['speedup']:.1f}x; byte check: {check['files'] - check['differing']}/"
        f"{check['files']} parquet files identical {mark(check['differing'] == 0)}; "
        f"under {TARGET_S:.0f} s: {mark(median < TARGET_S) if full else 'n/a (not full scale)'}"
    )
    print(f"wrote {write_result(NAME + ('_quick' if args.quick else ''), result)}")
    return 0 if check["differing"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
