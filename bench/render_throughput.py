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
  beforehand, untimed). ``overhead = ours_time / bare_time``, target <= 1.3x: everything ours
  adds on top (resizing, pasting, cache I/O, pickling results, sha256, parquet, start-up).

It also checks correctness alongside speed: ours must produce the same JPEG bytes as the
original algorithm (both resize the same decoded pixels with the same bicubic filter).

Run ``python bench/render_throughput.py`` (about 2 minutes on 2 cores) or ``--quick``
(well under a minute). Results go to ``bench/results/render_throughput.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from synthetic_coco import (
    machine_info,
    mark,
    mean_ms,
    print_table,
    timed,
    usable_cpus,
    write_result,
    write_synthetic_coco,
)

from benchsmith.stages.cell_cache import pool_context
from benchsmith.stages.stitching import decode_rgb, encode_jpeg, load_cell, render_stitched_image

# Only light modules (numpy, Pillow, the stitching helpers) are imported at module level. With
# CPython 3.11's forkserver every worker re-imports the main script (its preload of __main__
# never happens: it looks up the preparation key "main_path", which is named
# "init_main_from_path"), so heavy imports here would be paid by every bare *and* ours worker.
# The ``benchsmith`` CLI's own main module is light too, so this keeps worker start-up as in a
# real build: ours' workers import what unpickling their task function pulls in, no more.

NAME = "render_throughput"
WORKERS = 2
CELL = 256
QUALITY = 75
SPEEDUP_TARGET = 3.0
OVERHEAD_TARGET = 1.3
CHECK_FIRST = 3

#: grid -> (source images S, pool size P). Canonical pools cut P stitched images out of
#: successive permutations of the S sources, so each source fills P * N^2 / S = 20 cells, as
#: in the full build (10,000-image pools for N = 1, 2, 4, 8 share one cell cache: 850k cells
#: over ~40.5k COCO val images, ~21 cells each).
FULL_SIZES = {4: (400, 500), 8: (320, 100)}
QUICK_SIZES = {4: (96, 120), 8: (128, 40)}


@dataclass
class GridCase:
    """One grid's inputs: its own source folder and plan (grids are timed independently)."""

    grid: int
    n_sources: int
    pool_size: int
    images_dir: Path
    plan_dir: Path
    cells: list[list[tuple[int, int, str]]]  # per stitched image: (row, col, file_name), 1-based

    @property
    def cell_uses(self) -> float:
        return self.pool_size * self.grid**2 / self.n_sources


def prepare_case(work: Path, grid: int, n_sources: int, pool_size: int) -> GridCase:
    """Synthetic COCO source + canonical plan for one grid, as ``benchsmith mmneedle plan``."""
    import polars as pl

    from benchsmith.builders.mmneedle.config import PlanConfig
    from benchsmith.builders.mmneedle.plan import plan_mmneedle, write_plan
    from benchsmith.sources.coco import read_captions

    coco = write_synthetic_coco(work / f"coco_n{grid}", n_sources, seed=grid)
    source = read_captions(coco.captions_path)
    config = PlanConfig(
        order="canonical",
        grids=(grid,),
        haystack_sizes=(1,),
        needle_counts=(1,),
        pool_size=pool_size,
        samples_per_config=2,
        seed=0,
    )
    plan_dir = work / f"plan_n{grid}"
    write_plan(plan_mmneedle(source, config), source, plan_dir, coco.images_dir)
    frame = pl.read_parquet(plan_dir / "pools" / f"n{grid}.parquet")
    cells = [[(c["row"], c["col"], c["file_name"]) for c in row] for row in frame["cells"]]
    return GridCase(grid, n_sources, pool_size, coco.images_dir, plan_dir, cells)


# --- baseline: the original algorithm ------------------------------------------------------


def baseline_render(case: GridCase) -> tuple[list[str], list[bytes]]:
    """Original per-cell algorithm, one process; returns (sha256 per output, first outputs).

    Hashing inside the timed loop costs ~0.1 ms per output (<0.5% of the loop), and keeps
    memory flat instead of holding every output for the equality check.
    """
    digests: list[str] = []
    first: list[bytes] = []
    side = case.grid * CELL
    for cells in case.cells:
        canvas = Image.new("RGB", (side, side))
        for row, col, name in cells:
            with Image.open(case.images_dir / name) as source:
                tile = source.convert("RGB").resize((CELL, CELL))
            canvas.paste(tile, ((col - 1) * CELL, (row - 1) * CELL))
        buffer = io.BytesIO()
        canvas.save(buffer, "JPEG", quality=QUALITY)
        data = buffer.getvalue()
        digests.append(hashlib.sha256(data).hexdigest())
        if len(first) < CHECK_FIRST:
            first.append(data)
    return digests, first


# --- bare cost: decode each source once + encode each output once ---------------------------

_bare: dict[str, Any] = {}


def _bare_init(canvas_path: str, shape: tuple[int, ...]) -> None:
    _bare["canvases"] = np.memmap(canvas_path, dtype=np.uint8, mode="r", shape=shape)


def _bare_decode(path: str) -> int:
    with Image.open(path) as image:
        image.load()
        return image.size[0]


def _bare_encode(index: int) -> int:
    return len(encode_jpeg(Image.fromarray(_bare["canvases"][index], "RGB"), QUALITY))


def build_canvases(case: GridCase, path: Path) -> tuple[int, ...]:
    """Untimed setup for the bare run: every output canvas, pixel-identical to ours' canvases.

    Stored as a memory-mapped file (like ours' cell cache) so worker processes read them from
    the page cache instead of receiving 3-12 MB pickles, which would bias bare upwards.
    """
    names = sorted({name for cells in case.cells for _, _, name in cells})
    cells = {name: load_cell(case.images_dir / name, CELL)[0] for name in names}
    side = case.grid * CELL
    shape = (len(case.cells), side, side, 3)
    canvases = np.memmap(path, dtype=np.uint8, mode="w+", shape=shape)
    for index, row in enumerate(case.cells):
        ordered = [cells[name] for _, _, name in sorted(row)]  # (row, col) order = row-major
        canvases[index] = np.asarray(render_stitched_image(ordered, case.grid))
    canvases.flush()
    del canvases
    return shape


def bare_render(case: GridCase, canvas_path: Path, shape: tuple[int, ...]) -> None:
    """The unavoidable work on ``WORKERS`` forkserver processes, including pool start-up."""
    names = sorted({name for cells in case.cells for _, _, name in cells})
    paths = [os.fspath(case.images_dir / name) for name in names]
    with pool_context().Pool(
        WORKERS, initializer=_bare_init, initargs=(os.fspath(canvas_path), shape)
    ) as pool:
        for _ in pool.imap(_bare_decode, paths, chunksize=16):
            pass
        for _ in pool.imap(_bare_encode, range(len(case.cells)), chunksize=4):
            pass


# --- ours ---------------------------------------------------------------------------------


def ours_render(case: GridCase, out_dir: Path, reducing_gap: float | None = None) -> None:
    """``render_mmneedle`` with default settings (256 px, bicubic, q75) on ``WORKERS`` workers."""
    from benchsmith.builders.mmneedle.config import RenderConfig
    from benchsmith.builders.mmneedle.render import render_mmneedle

    cfg = RenderConfig(workers=WORKERS, reducing_gap=reducing_gap)
    render_mmneedle(case.plan_dir, out_dir, cfg, case.images_dir)


def read_stitched(out_dir: Path, grid: int) -> tuple[list[str], list[bytes]]:
    import pyarrow.parquet as pq

    table = pq.read_table(out_dir / "stitched" / f"n{grid}.parquet")
    return table["sha256"].to_pylist(), table["image"].slice(0, CHECK_FIRST).to_pylist()


def max_pixel_diff(a: bytes, b: bytes) -> int:
    pa_ = np.asarray(decode_rgb(a, "a"), dtype=np.int16)
    pb_ = np.asarray(decode_rgb(b, "b"), dtype=np.int16)
    return int(np.abs(pa_ - pb_).max())


# --- in-process cost breakdown ------------------------------------------------------------


def breakdown(case: GridCase, samples: int = 24) -> dict[str, float]:
    """Single-process per-item costs, so the reader can see where the time goes."""
    names = sorted({name for cells in case.cells for _, _, name in cells})[:samples]
    datas = [(case.images_dir / n).read_bytes() for n in names]
    decoded = [decode_rgb(d, n) for d, n in zip(datas, names, strict=True)]
    cell = load_cell(case.images_dir / names[0], CELL)[0]
    canvas = render_stitched_image([cell] * case.grid**2, case.grid)
    real = [
        render_stitched_image(
            [load_cell(case.images_dir / n, CELL)[0] for *_, n in sorted(row)], case.grid
        )
        for row in case.cells[:2]
    ]
    encoded = encode_jpeg(real[0], QUALITY)
    it = iter(range(10**9))

    def pick(seq: list) -> Any:
        return seq[next(it) % len(seq)]

    return {
        "decode_ms_per_source": mean_ms(lambda: decode_rgb(pick(datas), "x"), 3 * samples),
        "resize_bicubic_ms_per_source": mean_ms(
            lambda: pick(decoded).resize((CELL, CELL), Image.Resampling.BICUBIC), 3 * samples
        ),
        "resize_gap1_ms_per_source": mean_ms(
            lambda: pick(decoded).resize((CELL, CELL), Image.Resampling.BICUBIC, reducing_gap=1.0),
            3 * samples,
        ),
        "paste_ms_per_output": mean_ms(
            lambda: render_stitched_image([cell] * case.grid**2, case.grid), 10
        ),
        "encode_ms_per_output": mean_ms(lambda: encode_jpeg(pick(real), QUALITY), 10),
        "encode_flat_ms_per_output": mean_ms(lambda: encode_jpeg(canvas, QUALITY), 3),
        "sha256_ms_per_output": mean_ms(lambda: hashlib.sha256(encoded).hexdigest(), 20),
    }


# --- driver -------------------------------------------------------------------------------


def warm_forkserver() -> None:
    """Start the forkserver once before timing, so neither side pays its one-off start-up.

    A real build pays it once per process too; here it would land on whichever side runs
    first and blur the comparison.
    """
    with pool_context().Pool(1) as pool:
        pool.map(abs, [1])


def best_of(fn: Any, repeat: int) -> float:
    """Fastest of ``repeat`` wall times: the run least disturbed by other load on the machine."""
    return min(timed(fn)[0] for _ in range(repeat))


def run_case(case: GridCase, work: Path, repeat: int) -> dict[str, Any]:
    grid = case.grid
    print(f"\n== grid {grid}x{grid}: {case.n_sources} sources -> {case.pool_size} stitched images")
    costs = breakdown(case)

    t_ours = best_of(lambda: ours_render(case, work / f"ours_n{grid}"), repeat)
    t_gap = best_of(lambda: ours_render(case, work / f"gap_n{grid}", reducing_gap=1.0), repeat)
    canvas_path = work / f"canvases_n{grid}.u8"
    shape = build_canvases(case, canvas_path)
    t_bare = best_of(lambda: bare_render(case, canvas_path, shape), repeat)
    canvas_path.unlink()
    t_base, (base_digests, base_first) = timed(lambda: baseline_render(case))

    ours_digests, ours_first = read_stitched(work / f"ours_n{grid}", grid)
    _, gap_first = read_stitched(work / f"gap_n{grid}", grid)
    equal = sum(a == b for a, b in zip(ours_digests, base_digests, strict=True))
    first_equal = ours_digests[:CHECK_FIRST] == base_digests[:CHECK_FIRST]
    first_diff = max(max_pixel_diff(a, b) for a, b in zip(ours_first, base_first, strict=True))
    gap_diff = max(max_pixel_diff(a, b) for a, b in zip(gap_first, base_first, strict=True))

    n = case.pool_size
    result = {
        "grid": grid,
        "sources": case.n_sources,
        "stitched_images": n,
        "cells_per_source": case.cell_uses,
        "repeat": repeat,
        "seconds": {"ours": t_ours, "ours_gap1": t_gap, "bare": t_bare, "baseline": t_base},
        "images_per_s": {
            "ours": n / t_ours,
            "ours_gap1": n / t_gap,
            "bare": n / t_bare,
            "baseline": n / t_base,
        },
        "speedup": t_base / t_ours,
        "overhead": t_ours / t_bare,
        "overhead_gap1": t_gap / t_bare,
        "speedup_pass": t_base / t_ours >= SPEEDUP_TARGET,
        "overhead_pass": t_ours / t_bare <= OVERHEAD_TARGET,
        "overhead_gap1_pass": t_gap / t_bare <= OVERHEAD_TARGET,
        "costs_ms": costs,
        "correctness": {
            "byte_equal_outputs": equal,
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
    result["ideal_overhead"] = sum(model.values()) / bare_work
    return result


def report(results: list[dict[str, Any]]) -> None:
    rows = []
    for r in results:
        ips = r["images_per_s"]
        rows.append(
            [
                f"{r['grid']}x{r['grid']}",
                r["stitched_images"],
                f"{ips['baseline']:.1f}",
                f"{ips['ours']:.1f}",
                f"{ips['ours_gap1']:.1f}",
                f"{ips['bare']:.1f}",
                f"{r['speedup']:.2f}x {mark(r['speedup_pass'])}",
                f"{r['overhead']:.2f}x {mark(r['overhead_pass'])}",
                f"{r['overhead_gap1']:.2f}x {mark(r['overhead_gap1_pass'])}",
            ]
        )
    print(
        f"\nimages/s (workers={WORKERS}); targets: speedup >= {SPEEDUP_TARGET}x, overhead <= "
        f"{OVERHEAD_TARGET}x"
    )
    print_table(
        [
            "grid",
            "images",
            "baseline",
            "ours",
            "ours gap=1",
            "bare",
            "speedup",
            "overhead",
            "overhead gap=1",
        ],
        rows,
    )

    print("\nin-process costs (ms, one core)")
    print_table(
        ["grid", "decode/src", "resize/src", "resize gap=1", "paste/out", "encode/out", "sha/out"],
        [
            [
                f"{r['grid']}x{r['grid']}",
                f"{r['costs_ms']['decode_ms_per_source']:.2f}",
                f"{r['costs_ms']['resize_bicubic_ms_per_source']:.2f}",
                f"{r['costs_ms']['resize_gap1_ms_per_source']:.2f}",
                f"{r['costs_ms']['paste_ms_per_output']:.2f}",
                f"{r['costs_ms']['encode_ms_per_output']:.2f}",
                f"{r['costs_ms']['sha256_ms_per_output']:.2f}",
            ]
            for r in results
        ],
    )
    print(
        "\nwork model: CPU-s = count x in-process cost; 'ideal' = wall time if that work split "
        f"perfectly over {WORKERS} workers with no other cost"
    )
    print_table(
        [
            "grid",
            "decode",
            "resize",
            "paste",
            "encode",
            "sha256",
            "ideal bare",
            "bare",
            "ideal ours",
            "ours",
            "ideal overhead",
        ],
        [
            [
                f"{r['grid']}x{r['grid']}",
                *(
                    f"{r['work_model_s'][k]:.2f}"
                    for k in ("decode", "resize", "paste", "encode", "sha256")
                ),
                f"{(r['work_model_s']['decode'] + r['work_model_s']['encode']) / WORKERS:.2f}",
                f"{r['seconds']['bare']:.2f}",
                f"{sum(r['work_model_s'].values()) / WORKERS:.2f}",
                f"{r['seconds']['ours']:.2f}",
                f"{r['ideal_overhead']:.2f}x",
            ]
            for r in results
        ],
    )
    print("\ncorrectness: ours vs the original algorithm")
    print_table(
        [
            "grid",
            "byte-equal JPEGs",
            f"first {CHECK_FIRST} equal",
            "max px diff",
            "gap=1 max px diff",
        ],
        [
            [
                f"{r['grid']}x{r['grid']}",
                f"{r['correctness']['byte_equal_outputs']}/{r['correctness']['outputs']}",
                str(r["correctness"]["first_byte_equal"]),
                r["correctness"]["first_max_pixel_diff"],
                r["correctness"]["gap1_first_max_pixel_diff_vs_baseline"],
            ]
            for r in results
        ],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller pools (under a minute)")
    parser.add_argument(
        "--repeat", type=int, default=3, help="runs of ours and bare; the fastest counts"
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
    warm_forkserver()
    import benchsmith.builders.mmneedle.render  # noqa: F401  (parent-side import, not timed)

    with tempfile.TemporaryDirectory(prefix="bench-render-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        results = []
        for grid, (n_sources, pool_size) in sizes.items():
            case = prepare_case(work, grid, n_sources, pool_size)
            results.append(run_case(case, work, args.repeat))
    report(results)
    path = write_result(
        NAME,
        {
            "benchmark": NAME,
            "quick": args.quick,
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
