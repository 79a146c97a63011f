"""Stage ``ocr``: raw crawled HTML pages and scanned exam pages to problem records, cached.

Input is an exams folder as ``benchsmith source`` writes it (``html/*.html`` with
``html/answer_key.json``, ``pages/*.png`` with ``pages/answer_key.json``). Output, in ``OUT``:

- ``problems.json``: one record per page question in the release's own shape
  (``problem_content``, ``problem_content_list``, ``problem_type_list``,
  ``problem_answer_list``, ``img_paths``, ``education``, ``subject``, ``knowledge``), so the
  ``questions`` step treats crawled and released problems alike;
- ``images/<problem_id>_<k>.<ext>``: the page's pictures, rendered tables and cropped figures;
- ``sources.json``: per problem, the raw page (path under the exams root, sha256), its kind
  (``html`` or ``scan``) and, for scans, the OCR engine's identity and the page's skew;
- ``report.json``: counts and every skipped page or question with its reason.

The answer key is the bank's metadata for a page (level, subject, knowledge, type, answer): a
page without one is converted but skipped (counted as ``NO_ANSWER_KEY``). A page that does not
decode or convert (not UTF-8, no text, an image it names is missing), or on which OCR finds
nothing, is a counted skip naming the file and why, never an abort, so one bad scan does not
lose the rest. OCR results are cached in ``--cache`` by the page's sha256, the engine's identity
(name, version, languages, model files) and the reader's code: re-running after a change elsewhere (a
selection parameter, a new page) OCRs only pages it has not seen. Below that, ``--cache``'s
``reads/`` keeps the engine's own reads by the pixels it was given (:mod:`benchsmith.images.ocr_reads`):
after an edit to the page reader, every page is read again by the reader, but no image by the engine.
"""

from __future__ import annotations

import base64
import functools
import json
import re
from pathlib import Path
from typing import Any

from benchsmith.builders.multi.config import OcrSettings
from benchsmith.builders.multi.scan_quality import scan_quality
from benchsmith.core.atomic import atomic_directory, atomic_write_json
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.executor import ExecutorConfig, open_executor
from benchsmith.core.hashing import sha256_bytes
from benchsmith.core.progress import log, progress
from benchsmith.images.decode import decode_rgb

HTML_DIR, PAGES_DIR, KEY_FILE = "html", "pages", "answer_key.json"
READS_DIR = "reads"  # in the OCR cache: the engine's own reads (images/ocr_reads.py)
QUESTION_NUMBER = re.compile(r"^\s*(?:\*\*)?\s*\d+\s*[.．、]\s*(?:\*\*)?\s*")
EMPTY_BRACKETS = re.compile(r"[（(][\s\u3000]*[）)]")
UNDERSCORES = re.compile(r"_{3,}")


@functools.cache
def reader_digest() -> str:
    """A digest of the code that turns a page into questions: a cached result is reused only
    when that code is the one that made it (an edit to the reader invalidates the cache)."""
    from benchsmith.images import ocr, ocr_easyocr, ocr_engines, ocr_rapidocr, ocr_tesseract
    from benchsmith.sources.exams import option_cells, page_reader

    modules = (ocr, ocr_engines, ocr_rapidocr, ocr_tesseract, ocr_easyocr, page_reader,
               option_cells)  # fmt: skip
    return sha256_bytes(b"".join(Path(m.__file__).read_bytes() for m in modules))[:16]


@functools.cache
def engine(name: str):
    """One engine per process and name: its models load once, not once per page."""
    from benchsmith.images.ocr_engines import ocr_backend

    return ocr_backend(name)


def with_mask(stem: str, question_type: str, has_options: bool) -> str:
    """Blanks as ``[MASK]``: printed underscores, and after an empty answer bracket; a choice
    question without either gets ``[MASK]`` at the end of its stem (the release's layout)."""
    stem = UNDERSCORES.sub("[MASK]", stem)
    stem = EMPTY_BRACKETS.sub("（ ）[MASK]", stem, count=1) if "[MASK]" not in stem else stem
    if "[MASK]" not in stem and (has_options or question_type in ("单选", "多选")):
        stem = stem.rstrip() + "（ ）[MASK]"
    return stem


def record_of(meta: dict[str, Any], contents: list[str], questions: list[dict[str, Any]],
              images: list[str]) -> dict[str, Any]:  # fmt: skip
    return {
        "problem_content": "",
        "problem_content_list": contents,
        "problem_type_list": [q["type"] for q in questions],
        "problem_answer_list": [str(q.get("answer", "")) for q in questions],
        "problem_analysis_list": [str(q.get("analysis", "")) for q in questions],
        "knowledge": meta.get("knowledge") or [],
        "education": meta["education"],
        "subject": meta.get("subject") or [],
        "img_paths": images,
        "difficulty": meta.get("difficulty"),
        "quality": meta.get("quality"),
    }


def read_key(folder: Path) -> dict[str, Any]:
    path = folder / KEY_FILE
    if not path.is_file():
        return {}
    try:
        key = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BenchsmithError(f"answer key is not valid JSON: {exc}", path=path,
                              fix="repair the file (one object per page)") from exc  # fmt: skip
    if not isinstance(key, dict):
        raise BenchsmithError("answer key is not an object keyed by page", path=path,
                              fix="write {page: {education, subject, ...}}")  # fmt: skip
    return key


class Converted:
    """What the conversion has gathered: records, sources, images and skips."""

    def __init__(self, staging: Path):
        self.staging = staging
        self.problems: dict[str, dict[str, Any]] = {}
        self.sources: dict[str, dict[str, Any]] = {}
        self.skips: list[dict[str, str]] = []
        (staging / "images").mkdir()

    def skip(self, file: str, reason: str, detail: str = "") -> None:
        self.skips.append({"file": file, "reason": reason, "detail": detail})
        log(f"multi ocr: skipped {file}: {reason}{f' ({detail})' if detail else ''}")

    def image(self, problem_id: str, k: int, data: bytes, ext: str) -> tuple[str, str]:
        name = f"images/{problem_id}_{k}.{ext}"
        (self.staging / name).write_bytes(data)
        return name, sha256_bytes(data)

    def add(self, problem_id: str, record: dict[str, Any], source: dict[str, Any]) -> None:
        self.problems[problem_id] = record
        self.sources[problem_id] = source


def convert_html(root: Path, done: Converted, max_table_cells: int = 10_000) -> None:
    from benchsmith.sources.exams.html_reader import convert_page

    folder = root / HTML_DIR
    key = read_key(folder)
    for page in sorted(folder.glob("*.html")):
        file = f"{HTML_DIR}/{page.name}"
        try:
            converted = convert_page(page, max_table_cells)
        except BenchsmithError as exc:
            done.skip(file, "PAGE_NOT_CONVERTED", str(exc).splitlines()[0])
            continue
        meta = key.get(page.stem)
        if not meta:
            done.skip(file, "NO_ANSWER_KEY", f"{page.stem} not in {HTML_DIR}/{KEY_FILE}")
            continue
        questions = meta["questions"]
        problem_id = f"{meta['subject_code']}_html-{page.stem.replace('_', '')}"
        images, shas = [], []
        for k, image in enumerate(converted.images, start=1):  # files checked by the reader
            if image.source == "table":
                data, ext = image.png, "png"
            else:
                path = page.parent / image.file
                data, ext = path.read_bytes(), path.suffix.lstrip(".").lower() or "png"
            name, sha = done.image(problem_id, k, data, ext)
            images.append(name)
            shas.append(sha)
        markdown = QUESTION_NUMBER.sub("", converted.markdown, count=1)
        stem_lines = markdown.split("\n")
        first_option = next((i for i, line in enumerate(stem_lines)
                             if re.match(r"^A[.．、]", line.strip())), len(stem_lines))  # fmt: skip
        stem = with_mask("\n".join(stem_lines[:first_option]), questions[0]["type"],
                         first_option < len(stem_lines))  # fmt: skip
        content = "\n".join([stem, *stem_lines[first_option:]])
        raw = page.read_bytes()
        done.add(problem_id, record_of(meta, [content], questions[:1], images),
                 {"kind": "html", "file": file, "sha256": sha256_bytes(raw), "images": shas})  # fmt: skip


def ocr_page(path: Path, backend_name: str, cache_dir: Path) -> dict[str, Any]:
    """The page reader's result as JSON, from the cache or freshly read (run in a worker)."""
    from benchsmith.images.ocr_reads import RememberedReads
    from benchsmith.sources.exams.page_reader import read_page

    backend = engine(backend_name)
    data = path.read_bytes()
    digest = sha256_bytes(f"{sha256_bytes(data)}|{backend.identity()}|{reader_digest()}".encode())
    cached = cache_dir / digest[:2] / f"{digest}.json"
    if cached.is_file():
        return {**json.loads(cached.read_text(encoding="utf-8")), "cached": True}
    # the engine's reads are kept apart (by pixels and engine): a changed reader re-reads no image
    page = read_page(path, RememberedReads(backend, cache_dir / READS_DIR))
    result = {
        "engine": backend.identity(),
        "skew_deg": page.skew_deg,
        "figures": [base64.b64encode(png).decode("ascii") for png in page.figure_png],
        "lines": page.lines,
        "questions": [{"number": q.number, "stem": q.stem, "options": q.options,
                       "blanks": q.blanks, "figures": q.figures} for q in page.questions],
    }  # fmt: skip
    atomic_write_json(cached, result)
    return {**result, "cached": False}


def _ocr_job(job: tuple[Path, str, Path]) -> dict[str, Any]:
    """A page's result, or why it could not be read; a missing OCR engine is not about one page
    and stops the stage (in the parent, with its own message)."""
    from benchsmith.images.ocr import OcrUnavailable

    path, backend, cache = job
    try:
        return ocr_page(path, backend, cache)
    except OcrUnavailable as exc:
        return {"unavailable": str(exc).splitlines()[0], "fix": exc.fix}
    except BenchsmithError as exc:
        return {"error": str(exc).splitlines()[0]}


def convert_scans(root: Path, done: Converted, settings: OcrSettings) -> dict[str, int]:
    folder = root / PAGES_DIR
    key = read_key(folder)
    pages = sorted(folder.glob("*.png"))
    jobs = [(p, settings.backend, settings.cache_dir) for p in pages]
    if settings.executor == "ray" or (settings.workers > 1 and len(jobs) > 1):
        config = ExecutorConfig(settings.executor, settings.workers)
        with open_executor(config) as executor:
            results = list(progress(executor.map(_ocr_job, jobs), total=len(jobs), desc="OCR",
                                    unit="page"))  # fmt: skip
    else:
        results = [_ocr_job(j) for j in progress(jobs, total=len(jobs), desc="OCR", unit="page")]
    counts: dict[str, Any] = {"pages": len(pages), "cached": 0, "read": 0}
    errors: dict[str, list[float]] = {}
    for path, result in zip(pages, results, strict=False):
        file = f"{PAGES_DIR}/{path.name}"
        if "unavailable" in result:
            raise BenchsmithError(result["unavailable"], fix=result.get("fix") or
                                  "install the OCR engine, or choose another with --backend")  # fmt: skip
        if "error" in result:
            done.skip(file, "PAGE_NOT_READ", result["error"])
            continue
        counts["cached" if result["cached"] else "read"] += 1
        page_name, variant = path.stem.split(".", 1) if "." in path.stem else (path.stem, "")
        truth = path.with_name(f"{path.stem}.gt.txt")
        if truth.is_file():  # a page with its ground truth: measure the OCR on it
            from benchsmith.images.ocr import character_error_rate

            said = "\n".join(result["lines"]).replace("[MASK]", "")
            expected = truth.read_text(encoding="utf-8").replace("______", "")
            errors.setdefault(variant or "page", []).append(character_error_rate(said, expected))
        answers = key.get(page_name) or {}
        raw = path.read_bytes()
        raw_sha = sha256_bytes(raw)
        quality = scan_quality(decode_rgb(raw, path))
        for question in result["questions"]:
            meta = answers.get(str(question["number"]))
            where = f"{file}#{question['number']}"
            if not meta:
                done.skip(where, "NO_ANSWER_KEY", f"{page_name} {question['number']} not in "
                          f"{PAGES_DIR}/{KEY_FILE}")  # fmt: skip
                continue
            tag = f"{page_name}{'-' + variant if variant else ''}-q{question['number']}"
            problem_id = f"{meta['subject_code']}_scan-{tag.replace('_', '')}"
            images, shas = [], []
            for k, figure in enumerate(question["figures"], start=1):
                name, sha = done.image(problem_id, k, base64.b64decode(result["figures"][figure]),
                                       "png")  # fmt: skip
                images.append(name)
                shas.append(sha)
            tags = "".join(f"[IMAGE_{k}]" for k in range(1, len(images) + 1))
            stem = with_mask(question["stem"], meta["type"], bool(question["options"]))
            lines = [f"{tags}{stem}"] + [f"{chr(65 + k)}. {o}"
                                          for k, o in enumerate(question["options"])]  # fmt: skip
            done.add(problem_id, record_of(meta, ["\n".join(lines)], [meta], images),
                     {"kind": "scan", "file": file, "sha256": raw_sha, "images": shas,
                      "engine": result["engine"], "skew_deg": result["skew_deg"],
                      "scan_quality": quality})  # fmt: skip
    counts["cer"] = {v: round(sum(e) / len(e), 4) for v, e in sorted(errors.items())}
    counts["engine"] = next((r["engine"] for r in results if "engine" in r), settings.backend)
    return counts


def convert_exams(exams_root: str | Path, out: str | Path, settings: OcrSettings) -> dict[str, Any]:
    """Convert every raw page under ``exams_root`` into ``out`` (replaced atomically)."""
    root = Path(exams_root)
    if not root.is_dir():
        raise BenchsmithError("exams folder missing", path=root,
                              fix="run `benchsmith source prepare exams` or pass --exams DIR")  # fmt: skip
    with atomic_directory(out, inputs=[root]) as staging:
        done = Converted(staging)
        ocr = {"pages": 0, "cached": 0, "read": 0}
        if (root / HTML_DIR).is_dir():
            convert_html(root, done, settings.max_table_cells)
        if (root / PAGES_DIR).is_dir():
            ocr = convert_scans(root, done, settings)
        report = {
            "problems": len(done.problems),
            "by_kind": {kind: sum(s["kind"] == kind for s in done.sources.values())
                        for kind in ("html", "scan")},
            "ocr": {**ocr, "backend": settings.backend},
            "skipped": len(done.skips),
            "skips": done.skips,
        }  # fmt: skip
        # what the cache held is not a property of the output: it stays out of the files, so
        # a build with a warm cache and one without write the same bytes
        written = {**report, "ocr": {k: v for k, v in report["ocr"].items()
                                     if k not in ("read", "cached")}}  # fmt: skip
        for name, value in (("problems.json", done.problems), ("sources.json", done.sources),
                            ("report.json", written)):  # fmt: skip
            (staging / name).write_text(
                json.dumps(value, ensure_ascii=False, indent=1, sort_keys=True) + "\n",
                encoding="utf-8",
            )
    return report
