"""Render throughput: ``render_mmneedle`` against the original per-cell algorithm, in one run.

Why: in a full MMNeedle build each COCO image fills about 20 cells. The original decodes and
resizes the source JPEG again for every cell; ``render_mmneedle`` decodes and resizes each
source once into a memory-mapped cell cache and only pastes + encodes per stitched image, on
``workers`` processes. This script checks that design pays off on this machine, against two
references measured in the same run (so machine speed cancels out):

* **baseline**: the original algorithm (one process; per cell: open the source at full size,
  convert to RGB, resize to 256x256 with Pillow's default filter, paste on a black canvas;
  encode JPEG quality 75; nothing cached). ``speedup = baseline_time / ours_time``, target
  >= 3x.
* **bare**: the unavoidable work alone, on the same number of forkserver worker processes as
  ours: decode every unique source once and JPEG-encode every output once (canvases built
  beforehand, untimed), with glibc's default malloc settings (``--bare-malloc-tuned`` gives
  them the settings ours' workers use). ``overhead = ours_time / bare_time``, target <= 1.3x:
  everything ours adds on top (resizing, pasting, cache I/O, pickling results, sha256,
  parquet, start-up).
* **bare + resize**: bare plus the exact resize of every source to its cell, the floor if the
  resize is counted as unavoidable work (``overhead_vs_resize_floor = ours / bare_resize``).
  With the work model's second ideal (cells pasted from a case-sized cache in memory, as the
  workers paste them), it shows how much of the overhead no implementation of this pipeline
  can remove on this machine.

It also checks correctness alongside speed: ours must produce the same JPEG bytes as the
original algorithm (both resize the same decoded pixels with the same bicubic filter).

The settings and inputs live in ``render_case.py``, the two references in
``render_baselines.py`` and the printed tables in ``render_report.py``; this file is the
driver: ours, the in-process cost breakdown, the timing, and the checks.

Run ``python bench/render_throughput.py`` (about 5 minutes on 2 cores) or ``--quick``
(about a minute). Results go to ``bench/results/render_throughput.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing
import multiprocessing.forkserver
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from render_baselines import bare_render, baseline_render, build_canvases
from render_case import (
    CELL,
    CHECK_FIRST,
    FULL_SIZES,
    OVERHEAD_TARGET,
    QUALITY,
    QUICK_SIZES,
    SPEEDUP_TARGET,
    WORKERS,
    GridCase,
    prepare_case,
)
from render_report import report
from synthetic_coco import machine_info, mean_ms, timed, usable_cpus, write_result

from benchsmith.builders.mmneedle.jpeg_mosaic import cell_tile, mosaic_from_slots, slot_bytes
from benchsmith.builders.mmneedle.resample import resize_rgbx
from benchsmith.builders.mmneedle.stitching import (
    decode_rgb,
    encode_jpeg,
    load_cell_rgbx,
    render_stitched_image,
)
from benchsmith.images.decode import decode_rgbx

# Only light modules (numpy, Pillow, the stitching helpers) are imported at module level. With
# CPython 3.11's forkserver every worker re-runs the main script's imports (the server's own
# preload of __main__ never happens: it looks up the preparation key "main_path", which is
# named "init_main_from_path"), so heavy imports here would be paid by every bare *and* ours
# worker. The ``benchsmith`` CLI's main module is light too, so worker start-up stays as in a
# real build: workers import what benchsmith preloads or what their task function needs.

NAME = "render_throughput"


# --- ours ---------------------------------------------------------------------------------


def ours_render(case: GridCase, out_dir: Path, reducing_gap: float | None = None) -> None:
    """``render_mmneedle`` with default settings (256 px, bicubic, q75) on ``WORKERS`` workers."""
    from benchsmith.builders.mmneedle.config import RenderConfig
    from benchsmith.builders.mmneedle.render import render_mmneedle

    cfg = RenderConfig(workers=WORKERS, reducing_gap=reducing_gap)
    render_mmneedle(case.plan_dir, out_dir, cfg, case.images_dir)


def cli_render(case: GridCase, out_dir: Path) -> None:
    """The same render as a user runs it: a fresh ``benchsmith build mmneedle render`` process
    (its start-up, imports, fork server and kernels paid every time, as each ``dvc repro``
    stage pays them), from an empty folder so no ``params.yaml`` is read."""
    command = [sys.executable, "-m", "benchsmith", "build", "mmneedle", "render",
               str(case.plan_dir), "--images", str(case.images_dir), "--out", str(out_dir),
               "--workers", str(WORKERS)]  # fmt: skip
    result = subprocess.run(command, cwd=out_dir.parent, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"CLI render failed:\n{result.stderr[-2000:]}")


def read_stitched(out_dir: Path, grid: int) -> tuple[list[str], list[bytes]]:
    import pyarrow.parquet as pq

    table = pq.read_table(out_dir / "stitched" / f"n{grid}.parquet")
    return table["sha256"].to_pylist(), table["image"].slice(0, CHECK_FIRST).to_pylist()


def max_pixel_diff(a: bytes, b: bytes) -> int:
    """Largest per-channel difference of two JPEGs, for outputs that are not byte-equal."""
    left = np.asarray(decode_rgb(a, "a"), dtype=np.int16)
    right = np.asarray(decode_rgb(b, "b"), dtype=np.int16)
    return int(np.abs(left - right).max())


# --- in-process cost breakdown ------------------------------------------------------------


def breakdown(case: GridCase, samples: int = 24) -> dict[str, float]:
    """Single-process per-item costs, so the reader can see where the time goes."""
    names = case.source_names()[:samples]
    datas = [(case.images_dir / n).read_bytes() for n in names]
    decoded = [decode_rgb(d, n) for d, n in zip(datas, names, strict=True)]
    decoded_rgbx = [decode_rgbx(d, n) for d, n in zip(datas, names, strict=True)]
    # as the render workers do: RGBX cells (the cache's layout) pasted on an RGBX canvas
    cell = load_cell_rgbx(case.images_dir / names[0], CELL)[0]
    canvas = render_stitched_image([cell] * case.grid**2, case.grid)
    real = [
        render_stitched_image(
            [load_cell_rgbx(case.images_dir / n, CELL)[0] for *_, n in sorted(row)], case.grid
        )
        for row in case.cells[:2]
    ]
    encoded = encode_jpeg(real[0], QUALITY)
    it = iter(range(10**9))
    # a cache the size of the case's (one cell per source, ~100 MB) and the render's layouts:
    # pasting then reads cells from memory, as the workers do, not one cell hot in the CPU cache
    cache = np.empty((case.n_sources, *cell.shape), dtype=np.uint8)
    cache[:] = cell
    slot = {name: k for k, name in enumerate(case.source_names())}
    layouts = [[slot[n] for *_, n in sorted(row)] for row in case.cells]
    reused = np.zeros((case.grid * CELL, case.grid * CELL, cell.shape[2]), dtype=np.uint8)
    # ours: each source's cell as a JPEG tile in a case-sized slot cache, stitched as mosaics
    cells = [load_cell_rgbx(case.images_dir / n, CELL)[0] for n in names]
    packed = [cell_tile(c, QUALITY) for c in cells]
    slots = np.zeros((case.n_sources, slot_bytes(CELL)), np.uint8)
    for k in range(case.n_sources):
        slots[k, : packed[k % len(packed)].size] = packed[k % len(packed)]
    slots.flags.writeable = False

    def pick(seq: list) -> Any:
        return seq[next(it) % len(seq)]

    return {
        # what load_cell runs: strict decode to RGBX, then Pillow's bicubic reimplemented
        "decode_ms_per_source": mean_ms(lambda: decode_rgbx(pick(datas), "x"), 3 * samples),
        "resize_bicubic_ms_per_source": mean_ms(
            lambda: resize_rgbx(pick(decoded_rgbx), CELL, CELL), 3 * samples
        ),
        # the same pixels through Pillow (Image in, array out), as before 2026-11-26
        "resize_pillow_ms_per_source": mean_ms(
            lambda: np.asarray(pick(decoded).resize((CELL, CELL), Image.Resampling.BICUBIC)),
            3 * samples,
        ),
        "resize_gap1_ms_per_source": mean_ms(
            lambda: pick(decoded).resize((CELL, CELL), Image.Resampling.BICUBIC, reducing_gap=1.0),
            3 * samples,
        ),
        "paste_ms_per_output": mean_ms(
            lambda: render_stitched_image([cell] * case.grid**2, case.grid), 10
        ),
        "paste_from_cache_ms_per_output": mean_ms(
            lambda: render_stitched_image([cache[i] for i in pick(layouts)], case.grid, reused),
            3 * samples,
        ),
        "encode_ms_per_output": mean_ms(lambda: encode_jpeg(pick(real), QUALITY), 10),
        "tile_ms_per_source": mean_ms(lambda: cell_tile(pick(cells), QUALITY), 3 * samples),
        "mosaic_ms_per_output": mean_ms(
            lambda: mosaic_from_slots(slots, pick(layouts), case.grid, CELL, QUALITY), 3 * samples
        ),
        "encode_flat_ms_per_output": mean_ms(lambda: encode_jpeg(canvas, QUALITY), 3),
        "sha256_ms_per_output": mean_ms(lambda: hashlib.sha256(encoded).hexdigest(), 20),
    }


# --- driver -------------------------------------------------------------------------------


def warm_up(case: GridCase, work: Path) -> None:
    """One untimed render first, so no timed run pays one-off start-up costs.

    It starts the fork server the way a real render does (with whatever modules benchsmith
    asks it to preload; bare then forks from the same server, as any pool in the process
    would), imports the render modules in this process, and brings the case's source files
    into the page cache.
    """
    ours_render(case, work / "warmup")
    shutil.rmtree(work / "warmup", ignore_errors=True)


@dataclass(frozen=True)
class Timing:
    """Wall time plus where the CPU went (parent vs workers) and the minor page faults.

    Page faults are reported because they can be a large hidden cost: with glibc's default
    malloc, worker processes hand every freed multi-MB image buffer back to the kernel and
    fault it in again on the next image. Ours' workers tune malloc against that (see
    ``benchsmith.builders.mmneedle.render_pool``); bare's do not unless ``--bare-malloc-tuned``.
    """

    wall: float
    parent_cpu: float
    worker_cpu: float
    parent_faults: int
    worker_faults: int

    def as_dict(self) -> dict[str, float]:
        return {
            "wall": self.wall,
            "parent_cpu": self.parent_cpu,
            "worker_cpu": self.worker_cpu,
            "parent_minor_faults": self.parent_faults,
            "worker_minor_faults": self.worker_faults,
        }


def _workers_usage() -> tuple[float, int]:
    """(CPU seconds, minor page faults) used so far by every exited pool worker.

    forkserver workers are children of the fork server, not of this process, so
    ``RUSAGE_CHILDREN`` never sees them; the server's children counters in /proc do, once it
    has reaped them, which it does as soon as they exit. Linux only; (0, 0) elsewhere.
    """
    pid = multiprocessing.forkserver._forkserver._forkserver_pid
    try:
        stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, TypeError):
        return 0.0, 0
    # proc(5) field k is stat[k - 3]: 11 cminflt, 16 cutime, 17 cstime (clock ticks)
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(stat[13]) + int(stat[14])) / ticks, int(stat[8])


def _settled_workers_usage() -> tuple[float, int]:
    """``_workers_usage`` once it stops changing (the server reaps exited workers async)."""
    last = _workers_usage()
    for _ in range(40):
        time.sleep(0.05)
        now = _workers_usage()
        if now == last:
            return now
        last = now
    return last


def measure(fn: Callable[[], Any]) -> Timing:
    cpu_w0, faults_w0 = _settled_workers_usage()
    faults0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    cpu0 = time.process_time()
    wall, _ = timed(fn)
    parent = time.process_time() - cpu0
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults0
    cpu_w1, faults_w1 = _settled_workers_usage()
    return Timing(wall, parent, cpu_w1 - cpu_w0, faults, faults_w1 - faults_w0)


def median_round(timings: list[Timing]) -> Timing:
    """The run with the median wall time (its CPU and page-fault counts go with it)."""
    return sorted(timings, key=lambda t: t.wall)[len(timings) // 2]


def interleaved(fns: dict[str, Callable[[], Any]], rounds: int) -> dict[str, list[Timing]]:
    """``rounds`` rounds, each running every function once, so that load from other tenants
    of this shared machine falls on all of them alike; per-round ratios then cancel it."""
    runs: dict[str, list[Timing]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            runs[name].append(measure(fn))
    return runs


def ratio_stats(top: list[Timing], bottom: list[Timing]) -> dict[str, float]:
    """Median and spread of the per-round ratios ``top / bottom``."""
    ratios = [a.wall / b.wall for a, b in zip(top, bottom, strict=True)]
    return {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)}


def run_case(
    case: GridCase, work: Path, repeat: int, bare_malloc_tuned: bool = False
) -> dict[str, Any]:
    grid = case.grid
    print(f"\n== grid {grid}x{grid}: {case.n_sources} sources -> {case.pool_size} stitched images")
    costs = breakdown(case)

    canvas_path = work / f"canvases_n{grid}.u8"
    shape = build_canvases(case, canvas_path)
    runs = interleaved(
        {
            "ours": lambda: ours_render(case, work / f"ours_n{grid}"),
            "ours_gap1": lambda: ours_render(case, work / f"gap_n{grid}", reducing_gap=1.0),
            "ours_cli": lambda: cli_render(case, work / f"cli_n{grid}"),
            "bare": lambda: bare_render(case, canvas_path, shape, bare_malloc_tuned),
            "bare_resize": lambda: bare_render(
                case, canvas_path, shape, bare_malloc_tuned, resize=True
            ),
        },
        repeat,
    )
    m_ours, m_gap, m_cli, m_bare, m_bare_resize = (
        median_round(runs[k]) for k in ("ours", "ours_gap1", "ours_cli", "bare", "bare_resize")
    )
    canvas_path.unlink()
    t_base, (base_digests, base_first) = timed(lambda: baseline_render(case))

    ours_digests, ours_first = read_stitched(work / f"ours_n{grid}", grid)
    cli_digests, _ = read_stitched(work / f"cli_n{grid}", grid)
    _, gap_first = read_stitched(work / f"gap_n{grid}", grid)
    equal = sum(a == b for a, b in zip(ours_digests, base_digests, strict=True))
    first_equal = ours_digests[:CHECK_FIRST] == base_digests[:CHECK_FIRST]
    first_diff = max(max_pixel_diff(a, b) for a, b in zip(ours_first, base_first, strict=True))
    gap_diff = max(max_pixel_diff(a, b) for a, b in zip(gap_first, base_first, strict=True))

    n = case.pool_size
    t_ours, t_gap, t_bare = m_ours.wall, m_gap.wall, m_bare.wall
    overhead = ratio_stats(runs["ours"], runs["bare"])
    overhead_gap = ratio_stats(runs["ours_gap1"], runs["bare"])
    overhead_resize = ratio_stats(runs["ours"], runs["bare_resize"])
    overhead_cli = ratio_stats(runs["ours_cli"], runs["bare"])
    result = {
        "grid": grid,
        "sources": case.n_sources,
        "stitched_images": n,
        "cells_per_source": case.cell_uses,
        "repeat": repeat,
        "seconds": {
            "ours": t_ours,
            "ours_gap1": t_gap,
            "ours_cli": m_cli.wall,
            "bare": t_bare,
            "bare_resize": m_bare_resize.wall,
            "baseline": t_base,
        },
        "rounds_s": {k: [t.wall for t in v] for k, v in runs.items()},
        "cpu_seconds": {
            "ours": m_ours.as_dict(),
            "ours_gap1": m_gap.as_dict(),
            "bare": m_bare.as_dict(),
            "bare_resize": m_bare_resize.as_dict(),
        },
        "images_per_s": {
            "ours": n / t_ours,
            "ours_gap1": n / t_gap,
            "bare": n / t_bare,
            "bare_resize": n / m_bare_resize.wall,
            "baseline": n / t_base,
        },
        "speedup": t_base / t_ours,
        "overhead": overhead["median"],
        "overhead_spread": [overhead["min"], overhead["max"]],
        "overhead_vs_resize_floor": overhead_resize["median"],
        "overhead_vs_resize_floor_spread": [overhead_resize["min"], overhead_resize["max"]],
        "overhead_cli": overhead_cli["median"],
        "overhead_cli_spread": [overhead_cli["min"], overhead_cli["max"]],
        "overhead_cli_pass": overhead_cli["median"] <= OVERHEAD_TARGET,
        "overhead_gap1": overhead_gap["median"],
        "overhead_gap1_spread": [overhead_gap["min"], overhead_gap["max"]],
        "speedup_pass": t_base / t_ours >= SPEEDUP_TARGET,
        "overhead_pass": overhead["median"] <= OVERHEAD_TARGET,
        "overhead_gap1_pass": overhead_gap["median"] <= OVERHEAD_TARGET,
        "costs_ms": costs,
        "correctness": {
            "byte_equal_outputs": equal,
            "cli_byte_equal_outputs": sum(
                a == b for a, b in zip(cli_digests, base_digests, strict=True)
            ),
            "outputs": n,
            "first_byte_equal": first_equal,
            "first_max_pixel_diff": first_diff,
            "gap1_first_max_pixel_diff_vs_baseline": gap_diff,
        },
    }
    # CPU-seconds of each kind of work, from the in-process costs: where the time goes.
    result["work_model_s"] = {
        "decode": case.n_sources * costs["decode_ms_per_source"] / 1e3,
        "resize": case.n_sources * costs["resize_bicubic_ms_per_source"] / 1e3,
        "paste": n * costs["paste_ms_per_output"] / 1e3,
        "encode": n * costs["encode_ms_per_output"] / 1e3,
        "sha256": n * costs["sha256_ms_per_output"] / 1e3,
    }
    model = result["work_model_s"]
    bare_work = model["decode"] + model["encode"]
    # ours: cells cached as JPEG tiles, stitched images written as mosaics (no paste, no encode)
    result["ours_model_s"] = {
        "decode": model["decode"],
        "resize": model["resize"],
        "tile": case.n_sources * costs["tile_ms_per_source"] / 1e3,
        "mosaic": n * costs["mosaic_ms_per_output"] / 1e3,
        "sha256": model["sha256"],
    }
    ours_work = sum(result["ours_model_s"].values())
    result["ideal_overhead"] = ours_work / bare_work
    result["ideal_overhead_vs_resize_floor"] = ours_work / (bare_work + model["resize"])
    result["ideal_overhead_paste_encode"] = sum(model.values()) / bare_work
    # the same, with cells pasted from a case-sized cache in memory (as the workers paste)
    from_cache = (
        sum(model.values()) - model["paste"] + n * costs["paste_from_cache_ms_per_output"] / 1e3
    )
    result["ideal_overhead_paste_from_cache"] = from_cache / bare_work
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller pools (under a minute)")
    parser.add_argument(
        "--repeat",
        type=int,
        default=5,
        help="interleaved rounds of ours and bare: the median per-round ratio and its spread",
    )
    parser.add_argument(
        "--bare-malloc-tuned",
        action="store_true",
        help="give the bare workers the glibc malloc settings ours' workers apply to "
        "themselves (a tighter bare cost); ours is unaffected",
    )
    parser.add_argument("--keep", type=Path, help="work folder to keep (default: a temp dir)")
    args = parser.parse_args(argv)
    os.environ.setdefault("BENCHSMITH_PROGRESS", "0")  # bars would interleave with the tables
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    cpus = usable_cpus()
    if cpus < WORKERS:
        print(
            f"NOTE: only {cpus} usable core(s) for {WORKERS} workers: ours and bare cannot run "
            "in parallel, so speedup is lower than on the reference 2-core machine"
        )
    print(
        f"render throughput ({'quick' if args.quick else 'full'}, {WORKERS} workers, median of "
        f"{args.repeat} rounds{', bare malloc tuned' if args.bare_malloc_tuned else ''}) on {cpus} core(s)"
    )

    with tempfile.TemporaryDirectory(prefix="bench-render-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        results = []
        for grid, (n_sources, pool_size) in sizes.items():
            case = prepare_case(work, grid, n_sources, pool_size)
            warm_up(case, work)
            results.append(run_case(case, work, args.repeat, args.bare_malloc_tuned))
    report(results)
    path = write_result(
        NAME + ("_bare_malloc_tuned" if args.bare_malloc_tuned else ""),
        {
            "benchmark": NAME,
            "quick": args.quick,
            "bare_malloc_tuned": args.bare_malloc_tuned,
            "repeat": args.repeat,
            "workers": WORKERS,
            "cell_size": CELL,
            "jpeg_quality": QUALITY,
            "targets": {"speedup_min": SPEEDUP_TARGET, "overhead_max": OVERHEAD_TARGET},
            "machine": machine_info(),
            "grids": results,
        },
    )
    print(f"\nwrote {path}")
    if cpus < WORKERS:
        print(f"NOTE: measured with {cpus} usable core(s) < {WORKERS} workers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
