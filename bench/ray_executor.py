"""The Ray executor against the local one: the same render, OCR and ScanNet frame extraction.

Why: ``--executor ray`` exists for builds that outgrow one machine; on one machine it should
cost little more than the local worker processes, so that the numbers measured here can be
scaled to a cluster (``bench/README.md`` does that on paper). Each run is a fresh interpreter
(so the executor's start-up is paid and measured as a user pays it):

* **render**: ``render_mmneedle`` of a synthetic 4x4 case (``render_case.prepare_case``: 400
  photo-like 640x480 sources, 500 stitched images) with ``RenderConfig(workers=N,
  executor=...)``;
* **ocr**: ``convert_exams`` of the sample exam sources (8 scanned pages, the whole page reader,
  the default OCR engine) with an empty OCR cache, ``OcrSettings(workers=N, executor=...)``;
* **frames**: MMIU's ScanNet frame extraction (``scene_survey.survey_scenes``, one task per
  scene: the stream indexed, every frame's depth decoded and reprojected into the next) over 8
  synthetic scenes of 100 frames whose depth is ScanNet's 640x480 (the sample scenes' 80x60
  depth, upscaled 8x, with the depth intrinsics scaled to match), the sample profile's frame
  limits;

for N in 1 and 2 and both executors. Reported: wall time, **start-up** (the executor ready to
take tasks: the fork server and its first worker, or ``ray.init`` on this machine and a first
task's round trip, measured in a separate fresh interpreter), throughput excluding start-up,
and ray / local. Both executors must give the same bytes (checked: the stitched parquet, the
converted records, the surveys: pairs and stream indexes).

Run ``python bench/ray_executor.py`` (~9 min) or ``--quick`` (render and frames, smaller, 1
round). Results go to ``bench/results/ray_executor.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from synthetic_coco import machine_info, print_table, write_result

NAME = "ray_executor"
CPUS = (1, 2)
EXECUTORS = ("local", "ray")

CHILD = r"""
import hashlib, json, os, sys, time
from pathlib import Path
os.environ["BENCHSMITH_PROGRESS"] = "0"
job = json.loads(sys.argv[1])

def digest(folder):
    h = hashlib.sha256()
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file() and path.suffix in (".parquet", ".jsonl", ".json") and "info" not in path.name:
            h.update(path.relative_to(folder).as_posix().encode()); h.update(path.read_bytes())
    return h.hexdigest()

if __name__ == "__main__":
    start = time.perf_counter()
    if job["what"] == "startup":
        from benchsmith.core.executor import ExecutorConfig, open_executor
        with open_executor(ExecutorConfig(job["executor"], job["cpus"])) as executor:
            executor.call(abs, -1)  # a builtin: importable by every worker
            ready = time.perf_counter() - start
        print(json.dumps({"startup_s": ready, "with_shutdown_s": time.perf_counter() - start}))
    elif job["what"] == "render":
        from benchsmith.builders.mmneedle.config import RenderConfig
        from benchsmith.builders.mmneedle.render import render_mmneedle
        cfg = RenderConfig(workers=job["cpus"], executor=job["executor"])
        render_mmneedle(job["plan"], job["out"], cfg, job["images"])
        print(json.dumps({"wall_s": time.perf_counter() - start, "digest": digest(job["out"])}))
    elif job["what"] == "frames":
        from benchsmith.builders.mmiu.config import MmiuConfig
        from benchsmith.builders.mmiu.scene_survey import survey_scenes
        from benchsmith.builders.mmiu.scenes import scene_ids
        from benchsmith.core.executor import ExecutorConfig
        choice = MmiuConfig.from_params({}, "sample").frames
        root = Path(job["scannet"])
        surveys = survey_scenes(root, scene_ids(root, "all"), choice,
                                ExecutorConfig(job["executor"], job["cpus"]))
        text = json.dumps([[s, p.first, p.second, p.overlap, v.index.records.tolist()]
                           for s, v in surveys.items() for p in v.pairs])
        wall = time.perf_counter() - start
        print(json.dumps({"wall_s": wall, "digest": hashlib.sha256(text.encode()).hexdigest()}))
    else:
        from benchsmith.builders.multi.convert import OcrSettings, convert_exams
        settings = OcrSettings(workers=job["cpus"], executor=job["executor"], cache_dir=Path(job["cache"]))
        convert_exams(Path(job["exams"]), Path(job["out"]), settings)
        print(json.dumps({"wall_s": time.perf_counter() - start, "digest": digest(job["out"])}))
"""


def run_child(job: dict) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(job)],
        capture_output=True,
        text=True,
        env={**os.environ, "RAY_DEDUP_LOGS": "0"},
    )
    if done.returncode != 0:
        raise SystemExit(f"child failed: {job}\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def upscale_depth(root: Path, factor: int) -> int:
    """Every scene's ``.sens`` at ``factor`` times its depth size; returns the frames."""
    from benchsmith.sources.scannet.sens_writer import upscale_depth as upscale_stream

    return sum(upscale_stream(sens, factor) for sens in sorted(root.glob("scans/*/*.sens")))


def prepare(work: Path, quick: bool) -> dict:
    from render_case import prepare_case

    from benchsmith.sources.scannet.sample import write_sample_scannet

    scannet = write_sample_scannet(work / "ScanNet", n_scenes=4 if quick else 8,
                                   n_frames=60 if quick else 100)  # fmt: skip
    frames = upscale_depth(scannet, 8)
    case = prepare_case(work, 4, 96 if quick else 400, 120 if quick else 500)
    exams = work / "exams"
    subprocess.run(
        [sys.executable, "-m", "benchsmith", "source", "sample", "exams", "--out", str(exams)],
        check=True,
        capture_output=True,
    )
    return {"plan": str(case.plan_dir), "images": str(case.images_dir), "exams": str(exams),
            "scannet": str(scannet), "frames": frames, "images_count": case.pool_size, "pages": len(list((exams / "pages").glob("*.png")))}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="render and frames, smaller cases")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each setting (median)")
    args = parser.parse_args(argv)
    rounds = 1 if args.quick else args.rounds
    workloads = ("render", "frames") if args.quick else ("render", "ocr", "frames")
    results: dict = {"startup": {}, "runs": {}}
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
        work = Path(tmp)
        inputs = prepare(work, args.quick)
        for executor in EXECUTORS:
            for cpus in CPUS:
                times = [run_child({"what": "startup", "executor": executor, "cpus": cpus})
                         for _ in range(rounds)]  # fmt: skip
                results["startup"][f"{executor}/{cpus}"] = {
                    "startup_s": statistics.median(t["startup_s"] for t in times),
                    "with_shutdown_s": statistics.median(t["with_shutdown_s"] for t in times),
                }
        for what in workloads:
            units = {"render": inputs["images_count"], "ocr": inputs["pages"],
                     "frames": inputs["frames"]}[what]  # fmt: skip
            for cpus in CPUS:
                for executor in EXECUTORS:
                    walls, digests = [], set()
                    for k in range(rounds):
                        out = work / f"{what}-{executor}-{cpus}-{k}"
                        job = {"what": what, "executor": executor, "cpus": cpus, "out": str(out),
                               "cache": str(work / f"cache-{executor}-{cpus}-{k}"), **inputs}  # fmt: skip
                        result = run_child(job)
                        walls.append(result["wall_s"])
                        digests.add(result["digest"])
                    startup = results["startup"][f"{executor}/{cpus}"]["startup_s"]
                    wall = statistics.median(walls)
                    results["runs"][f"{what}/{executor}/{cpus}"] = {
                        "wall_s": wall,
                        "rounds_s": walls,
                        "units": units,
                        "per_s_after_startup": units / max(wall - startup, 1e-9),
                        "digests": sorted(digests),
                    }
    rows = []
    for key, run in results["runs"].items():
        what, executor, cpus = key.split("/")
        local = results["runs"][f"{what}/local/{cpus}"]
        same = run["digests"] == local["digests"] and len(run["digests"]) == 1
        rows.append([what, executor, cpus, f"{run['wall_s']:.2f}",
                     f"{results['startup'][f'{executor}/{cpus}']['startup_s']:.2f}",
                     f"{run['per_s_after_startup']:.2f}", f"{run['wall_s'] / local['wall_s']:.2f}x",
                     "yes" if same else "NO"])  # fmt: skip
    print_table(
        ["workload", "executor", "cpus", "wall s", "start-up s", "units/s after start-up",
         "wall vs local", "same bytes"],
        rows,
    )  # fmt: skip
    results.update({"quick": args.quick, "rounds": rounds, "machine": machine_info()})
    print(f"wrote {write_result(NAME, results)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
