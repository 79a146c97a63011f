"""MMIU's shortcut gate at a scale that can tell a shortcut from noise (300+ items per task).

At the sample profile's 12 items a task, a rule right 6 times of 12 on a 4-way task is still
p = 0.054 under chance: the gate cannot tell. This bench builds a larger synthetic MMIU source,
in the real formats (``--scenes`` ray-cast ScanNet scenes of ``--frames`` frames: ``.sens``
streams, meshes, segments, aggregations; the 660-image COCO miniature), plans ``--items``
items per task with the sample profile's frame rules, and runs ``build mmiu check``'s gate:
every option-text rule, every image, position and cross-item rule, and the learned
options-only model (5-fold, held-out). For each task it reports the best cheap rule, its
accuracy, its 99% Wilson interval and chance; a task fails when the interval's lower end beats
chance by more than 2 points.

The shortcuts the earlier distractors had (nearest-REF points, a copy of view B, recurring
round golds among fresh jitter, deflated jigsaw pieces) are planted on purpose in
``tests/builders/mmiu/test_gate_signals.py``, which shows the gate fails each.

    python bench/mmiu_gate.py [--scenes 30] [--frames 60] [--items 300] [--quick]

Writes ``bench/results/mmiu_gate.json``; the README's table is its output.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results" / "mmiu_gate.json"


def build_sources(root: Path, scenes: int, frames: int) -> tuple[Path, Path]:
    from benchsmith.sources.coco.sample import write_sample_coco
    from benchsmith.sources.scannet.sample import write_sample_scannet

    write_sample_scannet(root / "ScanNet", n_scenes=scenes, n_frames=frames)
    write_sample_coco(root / "coco", n_images=660, seed=0)
    return root / "ScanNet", root / "coco"


def table(report: dict) -> list[dict]:
    rows = []
    for task, block in sorted(report["tasks"].items()):
        best = next(r for r in block["rules"] if r["name"] == block["best_rule"])
        rows.append({
            "task": task,
            "items": block["items"],
            "best_rule": block["best_rule"],
            "accuracy": round(best["accuracy"], 4),
            "interval_99": block["best_interval"],
            "chance": block["chance"],
            "verdict": block["verdict"],
            "content_rules": {r["name"]: round(r["accuracy"], 4) for r in block["rules"]
                              if not r.get("gating", True)},
        })  # fmt: skip
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", type=int, default=30)
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="6 scenes, 60 items per task")
    parser.add_argument("--workdir", type=Path, help="keep the sources and plan here")
    args = parser.parse_args()
    if args.quick:
        args.scenes, args.items = 6, 60

    from benchsmith.builders.mmiu.config import MmiuConfig, ShortcutGate
    from benchsmith.builders.mmiu.plan import MmiuSources, build_mmiu
    from benchsmith.builders.mmiu.shortcuts import check_plan
    from benchsmith.core.executor import ExecutorConfig

    with tempfile.TemporaryDirectory(prefix="mmiu-gate-") as scratch:
        root = args.workdir or Path(scratch)
        started = time.perf_counter()
        scannet, coco = build_sources(root / "sources", args.scenes, args.frames)
        sources_s = time.perf_counter() - started
        config = MmiuConfig.from_params({"sizes": {"sample": {"items_per_task": args.items}}},
                                        "sample")  # fmt: skip
        started = time.perf_counter()
        build_mmiu(config, MmiuSources(scannet=scannet, coco=coco), root / "plan",
                   ExecutorConfig("local", 2))  # fmt: skip
        plan_s = time.perf_counter() - started
        started = time.perf_counter()
        report = check_plan(root / "plan", ShortcutGate(), root / "shortcuts.json")
        gate_s = time.perf_counter() - started
    rows = table(report)
    print(f"{'task':42} {'items':>5}  {'best cheap rule':38} {'acc':>6}  {'99% interval':15} "
          f"{'chance':>6}  verdict")  # fmt: skip
    for r in rows:
        low, high = r["interval_99"]
        print(f"{r['task']:42} {r['items']:>5}  {r['best_rule']:38} {r['accuracy']:>6.3f}  "
              f"[{low:.3f}, {high:.3f}]  {r['chance']:>6.3f}  {r['verdict']}")  # fmt: skip
        for name, accuracy in r["content_rules"].items():
            print(f"{'':50}reported only (the task's own skill): {name} {accuracy:.3f}")
    result = {
        "machine": {"python": sys.version.split()[0], "platform": platform.platform()},
        "scenes": args.scenes,
        "frames": args.frames,
        "items_per_task": args.items,
        "seconds": {
            "sources": round(sources_s, 1),
            "plan": round(plan_s, 1),
            "gate": round(gate_s, 1),
        },  # fmt: skip
        "failed": report["failed"],
        "tasks": rows,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"sources {sources_s:.0f} s, plan {plan_s:.0f} s, gate {gate_s:.0f} s -> {RESULTS}")
    return 1 if report["failed"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
