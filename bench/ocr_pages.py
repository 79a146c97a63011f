"""OCR of scanned exam pages, every engine side by side: character error rate, pages per second,
peak memory.

Why: MULTI's paper exams reach us as photocopies, read through one OCR interface
(``benchsmith.images.ocr``). The default engine is RapidOCR because it installs with pip; this
shows what that choice costs or gains against Tesseract (the previous default, a system
program) on the sample pages (``benchsmith.sources.exams.pages_sample``: clean, rotated 1.2
degrees, blurred, noisy), in one run.

- **CER** per page variant and engine, at three levels (``benchsmith.images.ocr.CER_LEVELS``):
  ``raw`` (the text as returned against the lines as drawn, spaces and line breaks counted),
  ``whitespace`` (NFKC, whitespace ignored: what ``build multi ocr`` reports) and
  ``punctuation`` (punctuation ignored as well). Once for the engine reading the whole page with
  the figures whitened, once through the page reader (blanks found and whitened, option lines
  re-read cell by cell: what the build keeps). The drawn blanks (``______``) are left out of
  the truth: blanks are found as strokes, not read.
- **Speed**: pages per second of the engine alone and of the whole page reader in one process
  (the models loaded and one page read first, timed apart as ``first_page_s``), and of the page
  reader in 2 worker processes.
- **Memory**: each engine runs in a fresh process; its peak resident memory (``VmHWM``) is
  reported beside that of the same process before the engine loaded.

Engines that cannot run here are listed with the reason (Tesseract needs its program, EasyOCR
its extra and user-supplied weights). Run ``python bench/ocr_pages.py`` (~2 minutes) or
``--quick``; the result goes to ``bench/results/ocr_pages.json``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from statistics import mean
from typing import Any

from PIL import Image, ImageDraw
from synthetic_coco import machine_info, print_table, write_result

NAME = "ocr_pages"


def peak_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def whitened(path: Path, boxes: list) -> Image.Image:
    image = Image.open(path)
    draw = ImageDraw.Draw(image)
    for box in boxes:
        draw.rectangle(box, fill=255)
    return image


def truth_of(folder: Path, page: str, variant: str) -> str:
    return (folder / f"{page}.{variant}.gt.txt").read_text("utf-8").replace("______", "")


def error_rates(said: dict[tuple[str, str], str], folder: Path) -> dict[str, dict[str, float]]:
    """Mean CER over the pages, per level and variant."""
    from benchsmith.images.ocr import CER_LEVELS, character_error_rate
    from benchsmith.sources.exams.pages_sample import VARIANTS

    return {
        level: {
            variant: round(mean(character_error_rate(text, truth_of(folder, page, v), level)
                                for (page, v), text in said.items() if v == variant), 4)
            for variant in VARIANTS
        }
        for level in CER_LEVELS
    }  # fmt: skip


_WORKER_ENGINE: list = []


def _load_worker_engine(name: str) -> None:
    from benchsmith.images.ocr_engines import ocr_backend

    _WORKER_ENGINE.append(ocr_backend(name))


def _read_in_worker(path: str) -> int:
    from benchsmith.sources.exams.page_reader import read_page

    return len(read_page(path, _WORKER_ENGINE[0]).questions)


def measure_engine(name: str, folder: str, rounds: int) -> dict[str, Any]:
    """Everything about one engine, in a process of its own (run through a spawn pool)."""
    from benchsmith.images.ocr import OcrUnavailable
    from benchsmith.images.ocr_engines import ocr_backend
    from benchsmith.sources.exams.page_reader import read_page

    root = Path(folder)
    manifest = json.loads((root / "pages.json").read_text("utf-8"))
    jobs = [(p, v) for p in manifest["pages"] for v in manifest["variants"]]
    before = peak_mib()
    backend = ocr_backend(name)
    try:
        identity = backend.identity()
    except OcrUnavailable as exc:
        return {"unavailable": str(exc).splitlines()[0]}
    pages = {(p, v): whitened(root / f"{p}.{v}.png", manifest["pages"][p]["figures"][v])
             for p, v in jobs}  # fmt: skip
    start = time.perf_counter()
    backend.read(pages[jobs[0]])  # loads the models
    first_page = time.perf_counter() - start
    engine_text = {job: backend.read(image).text for job, image in pages.items()}
    reader_text = {job: "\n".join(read_page(root / f"{job[0]}.{job[1]}.png", backend).lines)
                   .replace("[MASK]", "") for job in jobs}  # fmt: skip
    start = time.perf_counter()
    for _ in range(rounds):
        for image in pages.values():
            backend.read(image)
    engine_rate = rounds * len(pages) / (time.perf_counter() - start)
    start = time.perf_counter()
    for _ in range(rounds):
        for page, variant in jobs:
            read_page(root / f"{page}.{variant}.png", backend)
    reader_rate = rounds * len(jobs) / (time.perf_counter() - start)
    return {
        "identity": identity,
        "first_page_s": round(first_page, 3),
        "pages_per_s": {"engine": round(engine_rate, 3), "page_reader": round(reader_rate, 3)},
        "cer": {"engine": error_rates(engine_text, root), "page_reader": error_rates(reader_text, root)},
        "peak_mib": {"before_engine": round(before, 1), "with_engine": round(peak_mib(), 1)},
    }  # fmt: skip


def reader_with_workers(name: str, folder: Path, rounds: int, workers: int) -> float:
    """Pages per second of the page reader in ``workers`` processes, engines loaded first."""
    manifest = json.loads((folder / "pages.json").read_text("utf-8"))
    paths = [str(folder / f"{p}.{v}.png") for p in manifest["pages"] for v in manifest["variants"]]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=context, initializer=_load_worker_engine,
                             initargs=(name,)) as pool:  # fmt: skip
        list(pool.map(_read_in_worker, paths[:workers]))  # warm: models loaded in each
        start = time.perf_counter()
        list(pool.map(_read_in_worker, paths * rounds))
        return rounds * len(paths) / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one round instead of three")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds

    from benchsmith.images.ocr_engines import BACKENDS, DEFAULT_BACKEND
    from benchsmith.sources.exams.pages_sample import VARIANTS, write_sample_pages

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        manifest = write_sample_pages(folder)
        engines: dict[str, dict[str, Any]] = {}
        context = multiprocessing.get_context("spawn")
        for name in BACKENDS:
            with ProcessPoolExecutor(1, mp_context=context) as pool:  # a fresh process each
                engines[name] = pool.submit(measure_engine, name, str(folder), rounds).result()
            if "unavailable" not in engines[name]:
                engines[name]["pages_per_s"]["page_reader_2_workers"] = round(
                    reader_with_workers(name, folder, rounds, 2), 3)  # fmt: skip
    ran = {n: e for n, e in engines.items() if "unavailable" not in e}
    result: dict[str, Any] = {
        "machine": machine_info(),
        "pages": len(manifest["pages"]) * len(VARIANTS),
        "rounds": rounds,
        "font": manifest["font"],
        "default": DEFAULT_BACKEND,
        "engines": engines,
    }
    if DEFAULT_BACKEND in ran and "tesseract" in ran:
        default, tesseract = ran[DEFAULT_BACKEND]["pages_per_s"], ran["tesseract"]["pages_per_s"]
        result["default_vs_tesseract_pages_per_s"] = {
            k: round(default[k] / tesseract[k], 3) for k in default
        }
    rows = []
    for name, engine in ran.items():
        for route in ("engine", "page_reader"):
            rates = engine["cer"][route]
            rows.append([f"{name}, {route.replace('_', ' ')}",
                         *(f"{rates['whitespace'][v]:.1%}" for v in VARIANTS),
                         f"{mean(rates['raw'].values()):.1%}",
                         f"{mean(rates['punctuation'].values()):.1%}"])  # fmt: skip
    print_table(["CER (whitespace ignored)", *VARIANTS, "mean raw", "mean no punct."], rows)
    print()
    print_table(
        ["engine", "first page s", "engine pages/s", "reader pages/s", "reader 2 workers",
         "peak MiB (before engine)"],
        [[name, e["first_page_s"], e["pages_per_s"]["engine"], e["pages_per_s"]["page_reader"],
          e["pages_per_s"]["page_reader_2_workers"],
          f"{e['peak_mib']['with_engine']:.0f} ({e['peak_mib']['before_engine']:.0f})"]
         for name, e in ran.items()],
    )  # fmt: skip
    for name, engine in engines.items():
        if "unavailable" in engine:
            print(f"{name}: not run ({engine['unavailable']})")
    if "default_vs_tesseract_pages_per_s" in result:
        print(f"{DEFAULT_BACKEND} / tesseract pages/s:",
              json.dumps(result["default_vs_tesseract_pages_per_s"]))  # fmt: skip
    print("->", write_result(NAME, result))


if __name__ == "__main__":
    main()
