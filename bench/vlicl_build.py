"""VL-ICL build throughput and publish memory at full task sizes.

Why: the full VL-ICL rebuild reads ~12,000 MiniImageNet JPEGs and 1,000 CLEVR scenes, hashes
every image twice (sha256 at build, pixel sha256 + pHash at the leakage check) and embeds
them all at publish. This script measures each phase on synthetic sources in the real
layouts, at the paper's task sizes (``VliclConfig`` profile ``full``: open_mi 200 episodes of
5x5 support + 1 query, matching_mi 1,600 / 400 pairs, clevr 800 / 200, operators 80 / 60):

* **sources** (setup, timed but not a phase): a 20-class x 600-image MiniImageNet pool in the
  Ravi layout (``{train,val,test}.csv`` + ``images/``; 8 train / 2 val / 10 test classes, since
  matching_mi needs train classes and open_mi test classes), 84x84 JPEGs at quality 90 made
  from a random 8x8 colour texture upscaled (distinct pictures, so pHashes are far apart as in
  real photos, and fast to write), and 1,000 CLEVR scenes (800 train / 200 val) from the
  CLEVR sample writer, with Gaussian grain added so each PNG is ~250 KB like a real render.
* **build**: ``build_vlicl`` (rows, episodes, rendered operator images).
* **leakage**: ``check_vlicl_leakage`` (decode + pixel sha256 + pHash of every image).
* **publish**: ``publish_vlicl`` at ``--shard-mb`` (default 4 MB) and at 4x that; memory
  should follow the shard size (rows are batched by image bytes, a quarter of a shard), not
  the dataset size.
* **imports**: a child that only imports what publish needs: the floor.

Each phase runs in a fresh interpreter; its peak RSS is its own ``VmHWM``, read as it finishes
(``ru_maxrss`` from ``os.wait4``, kept as ``ru_maxrss_bytes``, includes the parent's high-water
mark at fork time). Images/s counts the image references a phase processes.
Run ``python bench/vlicl_build.py`` (~2 minutes on 2 cores, 1.5 of them writing the sources)
or ``--quick`` (100 images per class, 250 scenes, sample task sizes). Results go to
``bench/results/vlicl_build.json``.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from synthetic_coco import machine_info, mark, own_peak_rss_bytes, print_table, write_result

NAME = "vlicl_build"
CLASSES = {"train": 8, "val": 2, "test": 10}  # 20 classes
SIDE = 84


# --- sources --------------------------------------------------------------------------------


def texture_jpeg(rng: np.random.Generator) -> bytes:
    small = Image.fromarray(rng.integers(0, 256, size=(8, 8, 3), dtype=np.uint8))
    buffer = io.BytesIO()
    small.resize((SIDE, SIDE), Image.Resampling.BICUBIC).save(buffer, "JPEG", quality=90)
    return buffer.getvalue()


def write_pool(root: Path, per_class: int) -> tuple[Path, int]:
    """Ravi layout, flat images/, and ImageNet's ``LOC_synset_mapping.txt`` naming each class
    (the text-to-image tasks prompt with class names); returns (root, bytes written)."""
    images = root / "images"
    images.mkdir(parents=True)
    rng = np.random.default_rng(0)
    total, wnid = 0, 1000000
    names = []
    for split, count in CLASSES.items():
        rows = []
        for _ in range(count):
            wnid += 1
            label = f"n{wnid:08d}"
            names.append(f"{label} synthetic class {len(names) + 1}\n")
            for k in range(per_class):
                name = f"{label}{k + 1:08d}.jpg"
                data = texture_jpeg(rng)
                (images / name).write_bytes(data)
                total += len(data)
                rows.append((name, label))
        with open(root / f"{split}.csv", "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle, lineterminator="\n")
            writer.writerow(("filename", "label"))
            writer.writerows(rows)
    (root / "LOC_synset_mapping.txt").write_text("".join(names), encoding="utf-8")
    return root, total


def grain_clevr(clevr_root: Path, sigma: float) -> int:
    """Add Gaussian grain to every CLEVR PNG, in place; returns the bytes now on disk.

    The sample writer draws flat shapes (~2 KB PNGs), which would make publishing trivially
    cheap; real CLEVR renders are ~190 KB. Grain of sigma 2 gives ~250 KB PNGs (RGBA, alpha
    kept), so the publish phase moves about as many bytes as with the real images.
    """
    rng = np.random.default_rng(1)
    total = 0
    for path in sorted(clevr_root.glob("images/*/*.png")):
        with Image.open(path) as image:
            pixels = np.asarray(image.convert("RGBA"), dtype=np.float32)
        pixels[..., :3] += rng.normal(0.0, sigma, size=pixels[..., :3].shape)
        Image.fromarray(np.clip(np.rint(pixels), 0, 255).astype(np.uint8), "RGBA").save(path, "PNG")
        total += path.stat().st_size
    return total


# --- the measured children ------------------------------------------------------------------


def _refs(build: Path, removed: set[str] | None = None) -> tuple[int, int]:
    """(image references, distinct image files) of every row (minus removed query rows)."""
    refs, files = 0, set()
    for path in sorted((build / "tasks").glob("*/*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if removed and row["id"] in removed:
                continue
            refs += len(row["images"])
            files.update((r["root"], r["file"]) for r in row["images"])
    return refs, len(files)


#: the tasks built from the two sources this script writes (MiniImageNet, CLEVR): not TextOCR,
#: nor the tasks read from the official release (CoBSAT, the fast text-to-image ones)
BENCH_TASKS = (
    "open_mi", "matching_mi", "clevr", "operator_induction", "operator_induction_interleaved",
    "open_t2i_mi", "clevr_text", "operator_induction_text", "operator_induction_interleaved_text",
    "clevr_text_image_query", "operator_induction_text_image_query",
    "operator_induction_interleaved_text_image_query",
)  # fmt: skip


def child_build(work: str, profile: str, arg: str) -> dict[str, Any]:
    from benchsmith.builders.vlicl.config import VliclConfig
    from benchsmith.builders.vlicl.plan import VliclSources, build_vlicl

    start = time.perf_counter()
    summary = build_vlicl(
        VliclConfig.from_params({"tasks": list(BENCH_TASKS)}, profile),
        VliclSources(miniimagenet=Path(work) / "mini", clevr=Path(work) / "clevr" / "CLEVR_v1.0"),
        Path(work) / "build",
    )
    seconds = time.perf_counter() - start
    refs, files = _refs(Path(work) / "build")
    return {"seconds": seconds, "images": files, "image_refs": refs, "episodes": summary.episodes}


def child_leakage(work: str, profile: str, arg: str) -> dict[str, Any]:
    from benchsmith.builders.vlicl.leakage import check_vlicl_leakage

    start = time.perf_counter()
    report = check_vlicl_leakage(Path(work) / "build", 4, workers=int(arg))
    return {
        "seconds": time.perf_counter() - start,
        "images": report["images_hashed"],
        "summary": report["summary"],
    }


def child_publish(work: str, profile: str, arg: str) -> dict[str, Any]:
    from benchsmith.builders.vlicl.publication import VliclPublication
    from benchsmith.publish.publisher import publish

    out = Path(work) / f"published_{arg}mb"
    start = time.perf_counter()
    info = publish(VliclPublication(Path(work) / "build"), out, "0.0.0-bench", float(arg))
    seconds = time.perf_counter() - start
    removed = {i for t in info["leakage"]["tasks"].values() for i in t["removed"]}
    refs, _ = _refs(Path(work) / "build", removed)
    shards = sorted(p for p in (out / "data").rglob("*.parquet"))
    return {
        "seconds": seconds,
        "images": refs,
        "shards": len(shards),
        "published_bytes": sum(p.stat().st_size for p in shards),
        "rows": {
            c: {s: v["num_examples"] for s, v in d.items()} for c, d in info["configs"].items()
        },
    }


def child_imports(work: str, profile: str, arg: str) -> dict[str, Any]:
    start = time.perf_counter()
    import datasets  # noqa: F401

    import benchsmith.builders.vlicl.publication  # noqa: F401

    return {"seconds": time.perf_counter() - start, "images": 0}


CHILDREN = {
    "build": child_build,
    "leakage": child_leakage,
    "publish": child_publish,
    "imports": child_imports,
}


def run_child(kind: str, work: Path, profile: str, arg: str = "") -> dict[str, Any]:
    """One phase in a fresh interpreter; peak RSS from the kernel when it is reaped."""
    cmd = [sys.executable, __file__, "--child", kind, str(work), profile, arg]
    with tempfile.TemporaryFile() as stdout:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=stdout)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        stdout.seek(0)
        output = stdout.read().decode("utf-8", "replace")
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{kind} child failed:\n{output}")
    reply = json.loads(output.strip().splitlines()[-1])
    reply["peak_rss_bytes"] = reply.pop("own_peak_rss_bytes")  # the child's own VmHWM
    reply["ru_maxrss_bytes"] = usage.ru_maxrss * 1024  # includes the parent's mark at fork
    reply["wall_s"] = wall
    reply["images_per_s"] = reply["images"] / reply["seconds"] if reply["images"] else None
    return reply


def child_main(kind: str, work: str, profile: str, arg: str) -> int:
    os.environ["BENCHSMITH_PROGRESS"] = "0"
    reply = CHILDREN[kind](work, profile, arg)
    reply["own_peak_rss_bytes"] = own_peak_rss_bytes()
    print(json.dumps(reply), flush=True)
    return 0


# --- driver ---------------------------------------------------------------------------------


def mib(n: float) -> str:
    return f"{n / 1024**2:.0f} MiB"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 images per class, sample sizes")
    parser.add_argument("--shard-mb", type=float, default=4.0, help="small shard size (MB)")
    parser.add_argument("--workers", type=int, default=2, help="leakage hashing processes")
    parser.add_argument(
        "--clevr-grain", type=float, default=2.0, help="grain sigma for CLEVR PNGs (0: flat)"
    )
    parser.add_argument("--keep", type=Path, help="work folder to keep (default: a temp dir)")
    args = parser.parse_args(argv)
    os.environ.setdefault("BENCHSMITH_PROGRESS", "0")
    per_class, scenes = (100, (200, 50)) if args.quick else (600, (800, 200))
    profile = "sample" if args.quick else "full"
    result: dict[str, Any] = {"benchmark": NAME, "quick": args.quick, "profile": profile}

    with tempfile.TemporaryDirectory(prefix="bench-vlicl-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        from benchsmith.sources.clevr.sample import write_sample_clevr

        start = time.perf_counter()
        _, pool_bytes = write_pool(work / "mini", per_class)
        clevr = write_sample_clevr(work / "clevr", n_train=scenes[0], n_val=scenes[1], seed=0)
        clevr_bytes = grain_clevr(clevr, args.clevr_grain)
        result["sources"] = {
            "miniimagenet_images": 20 * per_class,
            "miniimagenet_bytes": pool_bytes,
            "clevr_scenes": sum(scenes),
            "clevr_bytes": clevr_bytes,
            "clevr_grain_sigma": args.clevr_grain,
            "seconds": time.perf_counter() - start,
        }
        print(
            f"sources: {20 * per_class} MiniImageNet JPEGs ({mib(pool_bytes)}), "
            f"{sum(scenes)} CLEVR scenes ({mib(clevr_bytes)}) in {result['sources']['seconds']:.1f} s"
        )
        small, large = args.shard_mb, args.shard_mb * 4
        runs = {
            "build": run_child("build", work, profile),
            "leakage": run_child("leakage", work, profile, str(args.workers)),
            f"publish_{small:g}mb": run_child("publish", work, profile, f"{small:g}"),
            f"publish_{large:g}mb": run_child("publish", work, profile, f"{large:g}"),
            "imports": run_child("imports", work, profile),
        }
    result["runs"] = runs
    floor = runs["imports"]["peak_rss_bytes"]
    a, b = runs[f"publish_{small:g}mb"], runs[f"publish_{large:g}mb"]
    result["publish_rss_above_floor"] = {
        f"{small:g}mb": a["peak_rss_bytes"] - floor,
        f"{large:g}mb": b["peak_rss_bytes"] - floor,
    }
    result["same_rows_both_shard_sizes"] = a["rows"] == b["rows"]
    grows = (b["peak_rss_bytes"] - floor) / max(1, a["peak_rss_bytes"] - floor)
    result["rss_growth_for_4x_shard"] = grows
    result["published_bytes_over_rss_above_floor"] = a["published_bytes"] / max(
        1, a["peak_rss_bytes"] - floor
    )
    result["machine"] = machine_info()
    print_table(
        ["phase", "images", "seconds", "images/s", "peak RSS", "shards"],
        [
            [
                name,
                r["images"],
                f"{r['seconds']:.2f}",
                f"{r['images_per_s']:.0f}" if r["images_per_s"] else "-",
                mib(r["peak_rss_bytes"]),
                r.get("shards", ""),
            ]
            for name, r in runs.items()
        ],
    )
    print(
        f"publish: {a['published_bytes'] / 1024**2:.1f} MiB of parquet; RSS above the import "
        f"floor {mib(a['peak_rss_bytes'] - floor)} at {small:g} MB shards, "
        f"{mib(b['peak_rss_bytes'] - floor)} at {large:g} MB ({grows:.2f}x for 4x the shard size); "
        f"same rows: {mark(result['same_rows_both_shard_sizes'])}"
    )
    print(f"leakage summary: {json.dumps(runs['leakage']['summary'])}")
    print(f"wrote {write_result(NAME, result)}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sys.exit(child_main(*sys.argv[2:6]))
    sys.exit(main())
