"""Shared helpers for the benchmarks: a synthetic COCO 2014 val source and small utilities.

The benchmarks must run offline and in minutes, so they cannot use the real 6 GB COCO val
set; but the miniature from ``benchsmith coco sample`` (solid-colour 64 px images) would make
decoding almost free and hide exactly the cost the render step is designed to avoid. So this
module writes *photo-like* 640x480 JPEGs instead: a smooth random colour field plus a gradient
plus Gaussian noise, saved at quality 90. That gives files of ~160 KB that take ~1.4 ms to
decode, close to a real COCO JPEG, next to a captions file in the real COCO format.

Only numpy and Pillow are imported at module level: the benchmark scripts import this module,
and forkserver workers re-import the script (see ``render_throughput.py``), so anything heavy
here would be charged to every worker start-up.
"""

from __future__ import annotations

import io
import json
import os
import platform
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, features

RESULTS_DIR = Path(__file__).resolve().parent / "results"


def photo_like(
    rng: np.random.Generator, width: int, height: int, noise: float = 24.0, blobs: int = 8
) -> np.ndarray:
    """An HxWx3 uint8 image with the statistics that make JPEG costly: smooth areas + grain.

    A random ``blobs`` x ``blobs`` colour grid upsampled bicubically gives large smooth
    regions (what photos mostly are), a random linear gradient avoids flat tiles, and the
    Gaussian noise stands in for texture and sensor grain so that the file size and the
    decode time land near a real COCO photo rather than near a synthetic flat image.
    """
    low = rng.integers(0, 256, size=(max(2, blobs * height // width), blobs, 3), dtype=np.uint8)
    img = np.asarray(
        Image.fromarray(low).resize((width, height), Image.Resampling.BICUBIC), dtype=np.float32
    )
    img += np.linspace(0, rng.uniform(-60, 60), width, dtype=np.float32)[None, :, None]
    img += np.linspace(0, rng.uniform(-60, 60), height, dtype=np.float32)[:, None, None]
    img += rng.standard_normal((height, width, 3), dtype=np.float32) * noise
    np.clip(img, 0, 255, out=img)
    return img.astype(np.uint8)


def jpeg_bytes(pixels: np.ndarray, quality: int) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(pixels, "RGB").save(buffer, "JPEG", quality=quality)
    return buffer.getvalue()


@dataclass(frozen=True)
class SyntheticCoco:
    """Where the synthetic source lives, with the COCO layout that ``benchsmith`` expects."""

    root: Path
    image_ids: list[int]

    @property
    def captions_path(self) -> Path:
        from benchsmith.sources.coco.reader import CAPTIONS_RELPATH

        return self.root / CAPTIONS_RELPATH

    @property
    def images_dir(self) -> Path:
        from benchsmith.sources.coco.reader import IMAGES_DIRNAME

        return self.root / IMAGES_DIRNAME

    @staticmethod
    def file_name(image_id: int) -> str:
        return f"COCO_val2014_{image_id:012d}.jpg"


# caption words of the synthetic pool (its own: the sample source draws scenes it describes)
SUBJECTS = ("dog", "cat", "man", "woman", "child", "horse", "bus", "train", "bird", "boat")
ACTIONS = ("standing", "sitting", "running", "waiting", "resting", "walking", "parked")
PLACES = ("on a street", "in a field", "near a river", "by a window", "in a park", "on a beach")


def write_synthetic_coco(
    root: Path,
    n_images: int,
    seed: int = 0,
    size: tuple[int, int] = (640, 480),
    quality: int = 90,
    noise: float = 24.0,
    captions_per_image: int = 2,
    distinct_images: int | None = None,
    write_images: bool = True,
) -> SyntheticCoco:
    """Write ``root/val2014/*.jpg`` and ``root/annotations/captions_val2014.json``.

    The captions file follows the real format (``images[]`` with id, file_name, width,
    height, license, coco_url, flickr_url; ``licenses[]``; ``annotations[]`` with id,
    image_id, caption), because the plan step reads it through the same pycocotools-based
    reader as a real build. The first two captions of an image are its own; any further ones
    (``captions_per_image`` > 2, like COCO's five) are short scene phrases that many images
    share, as real COCO captions often repeat, so the planner's caption checks have work.

    ``distinct_images``: draw only that many different photos and hard-link the rest to them
    (a full-size pool of 40,504 photos takes ~15 min to draw; decoding cost per file is the
    same). ``write_images=False`` writes the captions file only.
    """
    from benchsmith.sources.coco.sample import COCO_LICENSES

    rng = np.random.default_rng(seed)
    ids = sorted((rng.choice(581_000, size=n_images, replace=False) + 1).tolist())
    coco = SyntheticCoco(root, [int(i) for i in ids])
    coco.images_dir.mkdir(parents=True, exist_ok=True)
    coco.captions_path.parent.mkdir(parents=True, exist_ok=True)
    width, height = size
    images: list[dict[str, Any]] = []
    annotations: list[dict[str, Any]] = []
    phrase_rng = np.random.default_rng([seed, 1])  # its own stream: the photos stay as they were
    phrases = phrase_rng.integers(0, len(SUBJECTS) * len(ACTIONS) * len(PLACES), size=(n_images, 8))
    for k, image_id in enumerate(coco.image_ids):
        name = coco.file_name(image_id)
        if write_images and (distinct_images is None or k < distinct_images):
            pixels = photo_like(rng, width, height, noise)
            (coco.images_dir / name).write_bytes(jpeg_bytes(pixels, quality))
        elif write_images:
            twin = coco.images_dir / coco.file_name(coco.image_ids[k % distinct_images])
            os.link(twin, coco.images_dir / name)
        images.append(
            {
                "license": COCO_LICENSES[k % len(COCO_LICENSES)][0],
                "file_name": name,
                "coco_url": f"http://images.cocodataset.org/val2014/{name}",
                "height": height,
                "width": width,
                "date_captured": "2013-11-14 12:00:00",
                "flickr_url": f"http://farm{1 + k % 9}.staticflickr.com/{1000 + k}/{image_id}_b.jpg",
                "id": image_id,
            }
        )
        for j in range(captions_per_image):
            if j < 2:
                subject = SUBJECTS[(k + j) % len(SUBJECTS)]
                action = ACTIONS[(k * 3 + j) % len(ACTIONS)]
                place = PLACES[(k * 5 + j) % len(PLACES)]
                text = f"A {subject} {action} {place}, photo {image_id} view {j + 1}."
            else:
                phrase = int(phrases[k, j % 8])
                subject = SUBJECTS[phrase % len(SUBJECTS)]
                action = ACTIONS[phrase // len(SUBJECTS) % len(ACTIONS)]
                place = PLACES[phrase // (len(SUBJECTS) * len(ACTIONS))]
                text = f"A {subject} {action} {place}."
            annotations.append(
                {"image_id": image_id, "id": captions_per_image * k + j + 1, "caption": text}
            )
    captions = {
        "info": {"description": "benchsmith benchmark source (synthetic)", "year": 2014},
        "images": images,
        "licenses": [{"url": url, "id": lid, "name": name} for lid, name, url in COCO_LICENSES],
        "type": "captions",
        "annotations": annotations,
    }
    coco.captions_path.write_text(json.dumps(captions), encoding="utf-8")
    return coco


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """(wall seconds, result) of one call."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def mean_ms(fn: Callable[[], Any], repeat: int) -> float:
    """Mean milliseconds per call over ``repeat`` calls (after one warm-up call)."""
    fn()
    start = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - start) / repeat * 1e3


def machine_info() -> dict[str, Any]:
    """What the numbers depend on: the code revision, cores, Python, Pillow and libjpeg."""
    import datasets
    import PIL
    import pyarrow

    from benchsmith.core.records import code_revision

    return {
        "code_revision": code_revision(),
        "numpy": np.__version__,
        "pyarrow": pyarrow.__version__,
        "datasets": datasets.__version__,
        "cpu_count": os.cpu_count(),
        "usable_cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "pillow": PIL.__version__,
        "libjpeg_turbo": features.version("libjpeg_turbo"),
    }


def available_memory_bytes() -> int | None:
    """MemAvailable from /proc/meminfo (Linux), so memory-hungry baselines can be skipped."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def usable_cpus() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def own_peak_rss_bytes() -> int:
    """This process's own peak RSS (``VmHWM``). Not ``ru_maxrss``: Linux carries the parent's
    high-water mark into a child across fork and exec, so a child started by a benchmark that
    holds its synthetic data would report at least the parent's peak."""
    status = Path("/proc/self/status")
    if status.is_file():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # not Linux: best effort


def mark(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def write_result(name: str, result: dict[str, Any]) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def print_table(headers: list[str], rows: list[list[Any]]) -> None:
    """A plain fixed-width table (no dependency) that reads well in a terminal or a CI log."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        print(
            "  ".join(
                c.rjust(w) if i else c.ljust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if n == 0:
            print("  ".join("-" * w for w in widths))
