"""Whole-dataset audit of an MMNeedle build, timed against the build's own render.

Why: ``benchsmith audit DIR`` re-derives every row of every config, which for MMNeedle means
re-planning every sample from the captions and re-rendering every stitched image byte for
byte. The render step is therefore the natural baseline: a full audit cannot be cheaper than
rendering once, and should not cost much more (target: audit <= 1.5x render, on the same
machine in the same run). Rows/s and stitched images/s are reported for both.

Setup (timed, not a phase): a synthetic COCO 2014 val in the real layout with photo-like
640x480 JPEGs (``synthetic_coco.py``), a canonical plan (grids 2, 4, 8; haystacks of 1 and
10 images; 1, 2 and 5 needles), its render and its publish. Phases: **render** (the
baseline, ``render_mmneedle`` with 2 workers) and **audit** (``audit_dataset`` over every
config with 2 workers; it must report no difference).

Run ``python bench/audit_speed.py`` (~3 minutes on 2 cores) or ``--quick`` (~40 s). The
result goes to ``bench/results/audit_speed.json``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from synthetic_coco import machine_info, mark, print_table, write_result, write_synthetic_coco

NAME = "audit_speed"
TARGET_RATIO = 1.5


def run(work: Path, quick: bool, workers: int) -> dict:
    from benchsmith.builders.mmneedle.config import PlanConfig, RenderConfig
    from benchsmith.builders.mmneedle.family import MMNEEDLE
    from benchsmith.builders.mmneedle.plan import plan_mmneedle, write_plan
    from benchsmith.builders.mmneedle.publication import MmneedlePublication
    from benchsmith.builders.mmneedle.render import render_mmneedle
    from benchsmith.core.progress import quietly
    from benchsmith.publish.audit import audit_dataset
    from benchsmith.publish.publisher import publish
    from benchsmith.sources.coco.reader import read_captions

    n_images, pool, samples = (700, 40, 4) if quick else (1400, 120, 12)
    start = time.perf_counter()
    coco = write_synthetic_coco(work / "coco", n_images)
    captions = read_captions(coco.captions_path)
    config = PlanConfig(grids=(2, 4, 8), pool_size=pool, samples_per_config=samples)
    plan_dir, render_dir, out = work / "plan", work / "render", work / "published"
    write_plan(plan_mmneedle(captions, config), captions, plan_dir, coco.images_dir)
    setup_s = time.perf_counter() - start

    with quietly():
        start = time.perf_counter()
        render_mmneedle(plan_dir, render_dir, RenderConfig(workers=workers))
        render_s = time.perf_counter() - start
        publish(MmneedlePublication(plan_dir, render_dir), out, "0.0.0")
        start = time.perf_counter()
        report = audit_dataset(out, MMNEEDLE, workers=workers)
        audit_s = time.perf_counter() - start
    render_info = json.loads((render_dir / "render_info.json").read_text())
    stitched = sum(render_info["stitched_images"].values())
    rows = report.rows_checked
    ratio = audit_s / render_s
    print(
        f"setup {setup_s:.1f} s: {n_images} COCO images, plan of {config.samples_per_config} "
        f"samples per config, pool {pool}; {stitched} stitched images, {rows} rows audited"
    )
    print_table(
        ["phase", "seconds", "stitched img/s", "rows/s"],
        [
            ["render (baseline)", f"{render_s:.1f}", f"{stitched / render_s:.1f}", "-"],
            [
                "audit (every row)",
                f"{audit_s:.1f}",
                f"{stitched / audit_s:.1f}",
                f"{rows / audit_s:.0f}",
            ],
        ],
    )
    ok = ratio <= TARGET_RATIO and report.ok
    print(
        f"audit / render = {ratio:.2f} (target <= {TARGET_RATIO}) {mark(ok)}; "
        f"audit {'found no difference' if report.ok else 'REPORTED DIFFERENCES'}"
    )
    return {
        "quick": quick,
        "machine": machine_info(),
        "n_images": n_images,
        "stitched_images": stitched,
        "rows": rows,
        "render_s": render_s,
        "audit_s": audit_s,
        "ratio": ratio,
        "target_ratio": TARGET_RATIO,
        "audit_ok": report.ok,
        "pass": ok,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller build (~40 s)")
    parser.add_argument("--workers", type=int, default=2, help="render and audit processes")
    parser.add_argument("--keep", type=Path, help="keep the work folder here")
    args = parser.parse_args()
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        result = run(args.keep, args.quick, args.workers)
    else:
        with tempfile.TemporaryDirectory() as work:
            result = run(Path(work), args.quick, args.workers)
    print(f"result: {write_result(NAME, result)}")


if __name__ == "__main__":
    main()
