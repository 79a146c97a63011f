"""Render throughput benchmark: the tables ``render_throughput.py`` prints from its results.

``report`` takes the per-grid result dicts (as written to ``render_throughput.json``) and
prints: images/s with speedup and overhead against their targets, the in-process costs, the
work model and its ideal overhead, where the CPU time went, and the correctness checks.
"""

from __future__ import annotations

from typing import Any

from render_case import CHECK_FIRST, OVERHEAD_TARGET, SPEEDUP_TARGET, WORKERS
from synthetic_coco import mark, print_table


def _spread(pair: list[float]) -> str:
    return f"{pair[0]:.2f}-{pair[1]:.2f}"


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
                f"{r['overhead']:.2f}x ({_spread(r['overhead_spread'])}) "
                f"{mark(r['overhead_pass'])}",
                f"{r['overhead_gap1']:.2f}x ({_spread(r['overhead_gap1_spread'])}) "
                f"{mark(r['overhead_gap1_pass'])}",
                f"{r['overhead_cli']:.2f}x ({_spread(r['overhead_cli_spread'])}) "
                f"{mark(r['overhead_cli_pass'])}",
                f"{r['overhead_vs_resize_floor']:.2f}x "
                f"({_spread(r['overhead_vs_resize_floor_spread'])})",
            ]
        )
    print(
        f"\nimages/s (workers={WORKERS}, median round); targets: speedup >= {SPEEDUP_TARGET}x, "
        f"overhead (median of the per-round ratios, spread in brackets) <= {OVERHEAD_TARGET}x"
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
            "CLI overhead",
            "vs bare+resize",
        ],
        rows,
    )

    print("\nin-process costs (ms, one core)")
    print_table(
        [
            "grid",
            "decode/src",
            "resize/src",
            "resize Pillow",
            "resize gap=1",
            "paste/out",
            "paste from cache",
            "encode/out",
            "tile/src",
            "mosaic/out",
            "sha/out",
        ],
        [
            [
                f"{r['grid']}x{r['grid']}",
                f"{r['costs_ms']['decode_ms_per_source']:.2f}",
                f"{r['costs_ms']['resize_bicubic_ms_per_source']:.2f}",
                f"{r['costs_ms'].get('resize_pillow_ms_per_source', float('nan')):.2f}",
                f"{r['costs_ms']['resize_gap1_ms_per_source']:.2f}",
                f"{r['costs_ms']['paste_ms_per_output']:.2f}",
                f"{r['costs_ms']['paste_from_cache_ms_per_output']:.2f}",
                f"{r['costs_ms']['encode_ms_per_output']:.2f}",
                f"{r['costs_ms']['tile_ms_per_source']:.2f}",
                f"{r['costs_ms']['mosaic_ms_per_output']:.2f}",
                f"{r['costs_ms']['sha256_ms_per_output']:.2f}",
            ]
            for r in results
        ],
    )
    print(
        "\nwork model: CPU-s = count x in-process cost; 'ideal' = wall time if that work split "
        f"perfectly over {WORKERS} workers with no other cost. bare = decode + encode; ours = "
        "decode + resize + tile (each cell JPEG-encoded and indexed once) + mosaic (each "
        "stitched JPEG written from its cells' tiles) + sha256; 'paste+encode' = the previous "
        "pipeline (paste every cell, encode every canvas), pasting from a case-sized cache"
    )
    print_table(
        [
            "grid",
            "decode",
            "resize",
            "tile",
            "mosaic",
            "(paste",
            "encode)",
            "sha256",
            "ideal bare",
            "bare",
            "ideal ours",
            "ours",
            "ideal overhead (vs bare / bare+resize)",
            "ideal paste+encode",
        ],
        [
            [
                f"{r['grid']}x{r['grid']}",
                *(f"{r['ours_model_s'][k]:.2f}" for k in ("decode", "resize", "tile", "mosaic")),
                *(f"{r['work_model_s'][k]:.2f}" for k in ("paste", "encode", "sha256")),
                f"{(r['work_model_s']['decode'] + r['work_model_s']['encode']) / WORKERS:.2f}",
                f"{r['seconds']['bare']:.2f}",
                f"{sum(r['ours_model_s'].values()) / WORKERS:.2f}",
                f"{r['seconds']['ours']:.2f}",
                f"{r['ideal_overhead']:.2f}x / {r['ideal_overhead_vs_resize_floor']:.2f}x",
                f"{r['ideal_overhead_paste_from_cache']:.2f}x",
            ]
            for r in results
        ],
    )
    print(
        "\nwhere the wall time goes: CPU-s in the parent (task feeding, sha256, parquet) and in "
        f"the {WORKERS} workers, against the work model; 'extra' = CPU beyond the model "
        f"(page faults, worker start-up, IPC, cache I/O); 'busy' = CPU / (wall x {WORKERS} cores)"
    )
    cpu_rows = []
    for r in results:
        work, ours = r["work_model_s"], r["ours_model_s"]
        gap_resize = work["resize"] * (
            r["costs_ms"]["resize_gap1_ms_per_source"]
            / r["costs_ms"]["resize_bicubic_ms_per_source"]
        )
        models = {
            "bare": work["decode"] + work["encode"],
            "ours": sum(ours.values()),
            "ours_gap1": sum(ours.values()) - ours["resize"] + gap_resize,
        }
        models["bare_resize"] = models["bare"] + work["resize"]
        runs = (
            ("bare", "bare"),
            ("bare_resize", "bare+resize"),
            ("ours", "ours"),
            ("ours_gap1", "ours gap=1"),
        )
        for key, label in runs:
            m = r["cpu_seconds"][key]
            total = m["parent_cpu"] + m["worker_cpu"]
            cpu_rows.append(
                [
                    f"{r['grid']}x{r['grid']}",
                    label,
                    f"{m['wall']:.2f}",
                    f"{m['parent_cpu']:.2f}",
                    f"{m['worker_cpu']:.2f}",
                    f"{models[key]:.2f}",
                    f"{total - models[key]:.2f}",
                    f"{total / (m['wall'] * WORKERS):.0%}",
                    f"{(m['parent_minor_faults'] + m['worker_minor_faults']) / 1000:.0f}k",
                ]
            )
    print_table(
        [
            "grid",
            "run",
            "wall s",
            "parent CPU-s",
            "worker CPU-s",
            "model CPU-s",
            "extra",
            "busy",
            "page faults",
        ],
        cpu_rows,
    )

    print("\ncorrectness: ours vs the original algorithm")
    print_table(
        [
            "grid",
            "byte-equal JPEGs",
            "CLI byte-equal",
            f"first {CHECK_FIRST} equal",
            "max px diff",
            "gap=1 max px diff",
        ],
        [
            [
                f"{r['grid']}x{r['grid']}",
                f"{r['correctness']['byte_equal_outputs']}/{r['correctness']['outputs']}",
                f"{r['correctness']['cli_byte_equal_outputs']}/{r['correctness']['outputs']}",
                str(r["correctness"]["first_byte_equal"]),
                r["correctness"]["first_max_pixel_diff"],
                r["correctness"]["gap1_first_max_pixel_diff_vs_baseline"],
            ]
            for r in results
        ],
    )
