"""OCR of scanned exam pages: character error rate per variant and backend, pages per second.

Why: MULTI's paper exams reach us as photocopies. The exam source reads them through one OCR
interface (``benchsmith.images.ocr``); this measures what that reading is worth on the sample
pages (``benchsmith.sources.exams.pages_sample``: clean, rotated 1.2 degrees, blurred, noisy),
against their ground truth, and how fast it goes.

- **CER** per page variant and backend: edit distance over the ground truth's characters
  (NFKC, whitespace ignored), the figures whitened first (the page reader crops them out) and
  the drawn blanks (``______``) left out of the truth (blanks are found as lines, not read);
  once for the engine reading the whole page, once for the page reader's lines (the option lines
  re-read cell by cell, which is what ``build multi ocr`` keeps).
  Backends that cannot run here are listed with the reason (EasyOCR needs weights supplied by
  the user).
- **Throughput**: pages per second over ``--rounds`` passes of all pages, ours (words, boxes,
  confidences, lines: ``image_to_data``) in one process and with 1 and 2 worker processes, side
  by side with the baseline ``pytesseract.image_to_string`` (text only) in one process; the
  ratio of ours in one process to the baseline is the cost of the structure the page reader
  needs. Everything runs Tesseract with ``OMP_THREAD_LIMIT=1`` (the backend's default: its own
  threads make it slower on pages this size and compete with worker processes); the baseline
  is also timed with Tesseract's default threading, to show that choice.

Run ``python bench/ocr_pages.py`` (~1 minute) or ``--quick``; the result goes to
``bench/results/ocr_pages.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from PIL import Image, ImageDraw
from synthetic_coco import machine_info, print_table, write_result

NAME = "ocr_pages"


def prepared(folder: Path, manifest: dict, page: str, variant: str) -> Image.Image:
    image = Image.open(folder / f"{page}.{variant}.png")
    draw = ImageDraw.Draw(image)
    for box in manifest["pages"][page]["figures"][variant]:
        draw.rectangle(box, fill=255)
    return image


def whitened(path: str, boxes: list) -> Image.Image:
    image = Image.open(path)
    draw = ImageDraw.Draw(image)
    for box in boxes:
        draw.rectangle(box, fill=255)
    return image


def one_thread_each() -> None:
    """Tesseract runs OpenMP threads of its own: one per worker process, or they compete."""
    os.environ["OMP_THREAD_LIMIT"] = "1"


def read_ours(path_and_boxes: tuple[str, list]) -> str:
    from benchsmith.images.ocr import ocr_backend

    return ocr_backend("tesseract").read(whitened(*path_and_boxes)).text


def read_with_reader(path: str) -> int:
    from benchsmith.images.ocr import ocr_backend
    from benchsmith.sources.exams.page_reader import read_page

    return len(read_page(path, ocr_backend("tesseract")).questions)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="one round instead of three")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rounds = 1 if args.quick else args.rounds

    import pytesseract

    from benchsmith.images.ocr import BACKENDS, OcrUnavailable, character_error_rate, ocr_backend
    from benchsmith.sources.exams.pages_sample import VARIANTS, write_sample_pages

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        manifest = write_sample_pages(folder)
        pages = list(manifest["pages"])
        cer: dict[str, dict[str, float]] = {}
        unavailable = {}
        for name in BACKENDS:
            backend = ocr_backend(name)
            try:
                backend.identity()
                rates = {}
                for variant in VARIANTS:
                    errors = []
                    for page in pages:
                        truth = (folder / f"{page}.{variant}.gt.txt").read_text("utf-8")
                        text = backend.read(prepared(folder, manifest, page, variant)).text
                        errors.append(character_error_rate(text, truth.replace("______", "")))
                    rates[variant] = round(sum(errors) / len(errors), 4)
                cer[name] = rates
            except OcrUnavailable as exc:
                unavailable[name] = str(exc).splitlines()[0]
                continue
            # the page reader's own lines: option lines re-read cell by cell, blanks as [MASK]
            from benchsmith.sources.exams.page_reader import read_page

            rates = {}
            for variant in VARIANTS:
                errors = []
                for page in pages:
                    truth = (folder / f"{page}.{variant}.gt.txt").read_text("utf-8")
                    lines = read_page(folder / f"{page}.{variant}.png", backend).lines
                    said = "\n".join(lines).replace("[MASK]", "")
                    errors.append(character_error_rate(said, truth.replace("______", "")))
                rates[variant] = round(sum(errors) / len(errors), 4)
            cer[f"{name} + page reader"] = rates
        jobs = [(str(folder / f"{p}.{v}.png"), manifest["pages"][p]["figures"][v])
                for p in pages for v in VARIANTS] * rounds  # fmt: skip
        baselines = {}
        for threads in ("default", "1"):
            if threads == "1":
                os.environ["OMP_THREAD_LIMIT"] = "1"
            else:
                os.environ.pop("OMP_THREAD_LIMIT", None)
            start = time.perf_counter()
            for path, boxes in jobs:
                pytesseract.image_to_string(whitened(path, boxes), lang="chi_sim+eng",
                                            config="--psm 6")  # fmt: skip
            baselines[threads] = len(jobs) / (time.perf_counter() - start)
        baseline = baselines["1"]
        speed = {}
        start = time.perf_counter()
        for job in jobs:
            read_ours(job)
        speed["in_process"] = len(jobs) / (time.perf_counter() - start)
        for workers in (1, 2):
            start = time.perf_counter()
            with ProcessPoolExecutor(workers, initializer=one_thread_each) as pool:
                list(pool.map(read_ours, jobs))
            speed[f"{workers}_workers"] = len(jobs) / (time.perf_counter() - start)
        # the whole page reader (deskew, figures, blanks, OCR, option cells), as `build multi
        # ocr --workers N` runs it, one page per task
        reader_jobs = [str(folder / f"{p}.{v}.png") for p in pages for v in VARIANTS] * rounds
        for workers in (1, 2):
            start = time.perf_counter()
            with ProcessPoolExecutor(workers, initializer=one_thread_each) as pool:
                list(pool.map(read_with_reader, reader_jobs))
            speed[f"reader_{workers}_workers"] = len(reader_jobs) / (time.perf_counter() - start)
    result = {
        "machine": machine_info(),
        "pages": len(pages) * len(VARIANTS),
        "rounds": rounds,
        "cer": cer,
        "unavailable": unavailable,
        "pages_per_s": {
            "baseline_image_to_string": round(baseline, 3),
            **{f"ours_{k}": round(v, 3) for k, v in speed.items()},
        },  # fmt: skip
        "ours_vs_baseline": round(speed["in_process"] / baseline, 3),
        "two_workers_speedup": round(speed["2_workers"] / speed["1_workers"], 3),
        "reader_two_workers_speedup": round(
            speed["reader_2_workers"] / speed["reader_1_workers"], 3
        ),  # fmt: skip
    }
    print_table(["backend", *VARIANTS], [[n, *(r[v] for v in VARIANTS)] for n, r in cer.items()])
    for name, why in unavailable.items():
        print(f"{name}: not run ({why})")
    print(json.dumps(result["pages_per_s"]), "ours/baseline", result["ours_vs_baseline"],
          "2-worker speedup", result["two_workers_speedup"])  # fmt: skip
    print("->", write_result(NAME, result))


if __name__ == "__main__":
    main()
