"""``.sens`` frame extraction: our indexed, seeking reader against a load-everything baseline.

Why: a ScanNet scene's ``.sens`` stream is often several GB, and the MMIU builder reads a few
frames from each of hundreds of scenes. ScanNet's own reader (Python 2) loads every frame of a
stream into memory before anything is read, so its memory grows with the file. Ours
(``benchsmith.sources.scannet.sens.SensReader``) reads the header and each frame's fixed record,
seeks over the payloads, and reads one frame with one seek: its memory should stay flat as the
file grows, and extracting every frame should not be slower.

Setup: ``.sens`` v4 streams written in the real layout (640x480 JPEG colour, 320x240 zlib
depth, noisy images so payloads have realistic sizes) of increasing frame counts. Each
measurement runs in a fresh process, so its peak RSS (``VmHWM``) is its own:

- **ours**: open (index), then extract every frame (colour bytes, depth decompressed to uint16);
- **baseline**: read the whole file into memory, parse every frame record into a list holding
  its colour and depth payloads (as the official ``SensorData.load`` does), then decompress
  every depth.

Targets: ours' peak RSS does not grow with the file (largest / smallest <= 1.2), and its
extraction throughput is at least the baseline's. Run ``python bench/sens_extraction.py``
(~1 minute) or ``--quick``; the result goes to ``bench/results/sens_extraction.json``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import struct
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
from synthetic_coco import machine_info, mark, own_peak_rss_bytes, print_table, write_result

NAME = "sens_extraction"
COLOR, DEPTH = (640, 480), (320, 240)


def write_stream(path: Path, frames: int) -> int:
    """A stream of ``frames`` frames; returns its size in bytes."""
    from benchsmith.sources.scannet.sens_writer import (
        SensFrameData,
        SensStreamInfo,
        color_jpeg,
        write_sens,
    )

    rng = np.random.default_rng(0)
    base = rng.integers(0, 255, size=(COLOR[1] // 8, COLOR[0] // 8, 3), dtype=np.uint8)
    colour = np.repeat(np.repeat(base, 8, axis=0), 8, axis=1)
    depth = rng.integers(500, 5000, size=(DEPTH[1], DEPTH[0]), dtype=np.uint16)
    jpeg = color_jpeg(colour, 90)  # one encode, reused: the writer is not what is measured
    data = [
        SensFrameData(np.eye(4), jpeg, np.roll(depth, k, axis=1), k * 33_333, k * 33_333)
        for k in range(frames)
    ]
    write_sens(path, SensStreamInfo(COLOR, DEPTH), data)
    return path.stat().st_size


def extract_ours(path: str) -> int:
    from benchsmith.sources.scannet.sens import SensReader

    total = 0
    with SensReader(path) as sens:
        for index in sens.valid_frames:
            total += len(sens.color_bytes(index)) + int(sens.depth(index)[0, 0])
    return total


def extract_baseline(path: str) -> int:
    """Load-everything, as ScanNet's SensorData does: the whole file, then every frame."""
    data = Path(path).read_bytes()
    offset = 4
    (name_length,) = struct.unpack_from("<Q", data, offset)
    offset += 8 + name_length + 4 * 64 + 8
    width, height, dwidth, dheight = struct.unpack_from("<4I", data, offset)
    offset += 16 + 4
    (frames,) = struct.unpack_from("<Q", data, offset)
    offset += 8
    loaded = []
    for _ in range(frames):
        fixed = struct.unpack_from("<16f4Q", data, offset)
        offset += 96
        colour_size, depth_size = fixed[18], fixed[19]
        colour = data[offset : offset + colour_size]
        offset += colour_size
        depth = data[offset : offset + depth_size]
        offset += depth_size
        loaded.append((fixed[:16], colour, depth))
    total = 0
    for _, colour, depth in loaded:
        pixels = np.frombuffer(zlib.decompress(depth), dtype="<u2").reshape(dheight, dwidth)
        total += len(colour) + int(pixels[0, 0])
    return total


def _measure(which: str, path: str, queue) -> None:
    start = time.perf_counter()
    checksum = (extract_ours if which == "ours" else extract_baseline)(path)
    elapsed = time.perf_counter() - start
    queue.put((elapsed, own_peak_rss_bytes(), checksum))


def measure(which: str, path: Path) -> tuple[float, int, int]:
    """(seconds, peak RSS bytes, checksum) of one extraction in a fresh process."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_measure, args=(which, str(path), queue))
    process.start()
    result = queue.get()
    process.join()
    return result


def run(work: Path, quick: bool) -> dict:
    sizes = (100, 200, 400) if quick else (150, 600, 1800)
    rows, measured = [], []
    for frames in sizes:
        path = work / f"scene_{frames}.sens"
        size = write_stream(path, frames)
        ours_s, ours_rss, ours_sum = measure("ours", path)
        base_s, base_rss, base_sum = measure("baseline", path)
        assert ours_sum == base_sum, "the two readers disagree"
        measured.append(
            {
                "frames": frames,
                "file_mib": round(size / 2**20, 1),
                "ours": {"seconds": ours_s, "frames_per_s": frames / ours_s, "peak_rss_mib": ours_rss / 2**20},
                "baseline": {"seconds": base_s, "frames_per_s": frames / base_s, "peak_rss_mib": base_rss / 2**20},
            }
        )  # fmt: skip
        rows.append(
            [frames, f"{size / 2**20:.0f} MiB", f"{frames / ours_s:,.0f}", f"{frames / base_s:,.0f}",
             f"{ours_rss / 2**20:.0f} MiB", f"{base_rss / 2**20:.0f} MiB"]
        )  # fmt: skip
        path.unlink()
    growth = measured[-1]["ours"]["peak_rss_mib"] / measured[0]["ours"]["peak_rss_mib"]
    speed = min(m["ours"]["frames_per_s"] / m["baseline"]["frames_per_s"] for m in measured)
    print_table(
        ["frames", "file", "ours frames/s", "baseline frames/s", "ours peak RSS", "baseline peak"],
        rows,
    )
    print(
        f"ours: peak RSS largest/smallest file {growth:.2f}x (target <= 1.2) {mark(growth <= 1.2)}"
    )
    print(f"ours: throughput vs baseline, worst {speed:.2f}x (target >= 1.0) {mark(speed >= 1.0)}")
    return {
        "measured": measured,
        "ours_rss_growth": growth,
        "worst_speed_ratio": speed,
        "targets": {"rss_growth_max": 1.2, "speed_ratio_min": 1.0},
        "machine": machine_info(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smaller streams (~20 s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-sens-") as tmp:
        result = run(Path(tmp), args.quick)
    print(f"result: {write_result(NAME, result)}")


if __name__ == "__main__":
    main()
