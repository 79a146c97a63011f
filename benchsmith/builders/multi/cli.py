"""MULTI's command-line steps: ``benchsmith build multi ocr|questions|select|elite``.

Every option defaults to the ``multi:`` section of ``params.yaml`` (``--params``); a flag given
on the command line wins for that run. ``benchsmith source prepare exams`` puts the exam sources
in ``data/sources/exams/``; the DVC pipeline calls these same commands.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.builders.multi.config import MultiPlanSettings, MultiSourceFolders, OcrSettings
from benchsmith.core.command_inputs import (
    argument,
    earlier_step_folder,
    json_switch,
    metrics_file,
    output_folder,
    params_file,
    root_overrides,
)
from benchsmith.core.metrics import write_metrics
from benchsmith.core.params import build_settings, load_params, section
from benchsmith.core.progress import log, print_json
from benchsmith.family.base import ScoreRunsRequest, Step, StepSettings
from benchsmith.hf.roots import parse_root_flags

DEFAULT_CONVERTED = Path("data/multi/converted")
DEFAULT_QUESTIONS = Path("data/multi/questions")
DEFAULT_PLAN = Path("data/multi/plan")
ROOT_NAMES = ("release", "converted")


def parse_roots(values: tuple[str, ...]) -> dict[str, str]:
    return parse_root_flags(list(values), ROOT_NAMES, "multi")


def select_step_folder() -> Any:
    """``PLAN_DIR``, the select step's folder (optional: ``data/multi/plan``)."""
    return earlier_step_folder("the select step", DEFAULT_PLAN)


def multi_config(params: dict[str, Any], top: MultiPlanSettings):
    from benchsmith.builders.multi.config import MultiConfig

    seed = top.seed if top.seed is not None else build_settings(params).seed
    return MultiConfig.from_params(section(params, "multi"), seed)


@dataclass(frozen=True)
class OcrInputs:
    """What ``build multi ocr`` reads and writes."""

    json: bool = json_switch("conversion report")
    metrics: Path | None = metrics_file("OCR summary")
    params: Path | None = params_file()
    out: Path = output_folder("converted folder", DEFAULT_CONVERTED)


def run_ocr(args: OcrInputs, settings: OcrSettings, folders: MultiSourceFolders) -> int:
    from benchsmith.builders.multi.convert import convert_exams

    report = convert_exams(folders.exams, args.out, settings)
    ocr = report["ocr"]
    log(f"multi ocr: {report['problems']} problems ({report['by_kind']['html']} from HTML, "
        f"{report['by_kind']['scan']} from scans); {ocr['pages']} pages, {ocr['read']} read, "
        f"{ocr['cached']} from the cache; {report['skipped']} skipped -> {args.out}")  # fmt: skip
    write_metrics(args.metrics, {"problems": report["problems"], "skipped": report["skipped"],
                                 "cer": ocr.get("cer", {})})  # fmt: skip
    print_json(report, args.json)
    return 0


@dataclass(frozen=True)
class QuestionsInputs:
    """What ``build multi questions`` reads and writes."""

    json: bool = json_switch("build summary")
    converted: Path | None = argument(
        f"the ocr step's folder (default {DEFAULT_CONVERTED}, if present)", metavar="DIR"
    )
    no_release: bool = argument("crawled pages only", default=False)
    no_converted: bool = argument("the release only", default=False)
    params: Path | None = params_file()
    out: Path = output_folder("questions folder", DEFAULT_QUESTIONS)


def run_questions(args: QuestionsInputs, top: MultiPlanSettings,
                  folders: MultiSourceFolders) -> int:  # fmt: skip
    from benchsmith.builders.multi.plan import MultiSources, build_questions

    params = load_params(args.params)
    exams = folders.exams
    release = None if args.no_release else (folders.release or exams / "release")
    converted = None if args.no_converted else (args.converted or DEFAULT_CONVERTED)
    if converted is not None and args.converted is None and not Path(converted).exists():
        converted = None  # the default folder is optional; a named one must exist
    info = build_questions(multi_config(params, top),
                           MultiSources(Path(release) if release else None,
                                        Path(converted) if converted else None), args.out)  # fmt: skip
    print_json(info["counts"], args.json)
    return 0


@dataclass(frozen=True)
class SelectInputs:
    """What ``build multi select`` reads and writes."""

    questions_dir: Path = earlier_step_folder("the questions step", DEFAULT_QUESTIONS,
                                              metavar="QUESTIONS_DIR")  # fmt: skip
    json: bool = json_switch("selection summary")
    metrics: Path | None = metrics_file("near-duplicate and selection summary")
    params: Path | None = params_file()
    out: Path = output_folder("plan folder", DEFAULT_PLAN)


def run_select(args: SelectInputs, top: MultiPlanSettings) -> int:
    from benchsmith.builders.multi.plan import select_questions

    params = load_params(args.params)
    info = select_questions(args.questions_dir, multi_config(params, top), args.out)
    numbers = {k: v for k, v in info["near_duplicates"].items() if not isinstance(v, bool)}
    write_metrics(args.metrics, {"counts": info["counts"], "near_duplicates": numbers,
                                 "selection": info["selection"]})  # fmt: skip
    print_json(info["counts"], args.json)
    return 0


@dataclass(frozen=True)
class EliteInputs:
    """What ``build multi elite`` reads and writes."""

    run: tuple[str, ...] = argument(
        "a judge run's predictions (JSONL question_id/response, or the official JSON); repeat "
        "per run. Its weight is its own overall score",
        required=True,
        repeat=True,
        metavar="NAME=FILE",
    )
    out: Path = argument(
        "hard list to write (a JSON array of ids, the release's format); use it with "
        "multi.elite.mode: file",
        required=True,
        metavar="FILE",
    )
    plan_dir: Path = select_step_folder()
    text_only: tuple[str, ...] = argument(
        "a run that saw no images: skipped on image questions", repeat=True, metavar="NAME"
    )
    size: int = argument(
        "questions to draw from the candidates (default 500, the paper's)",
        default=500,
        metavar="N",
    )
    seed: int = argument(
        "seed of the final draw (the original's was unseeded)", default=0, metavar="S"
    )


def run_elite(args: EliteInputs) -> ScoreRunsRequest:
    from benchsmith.builders.multi.reselect import reselect_from_runs

    return reselect_from_runs(args.plan_dir, args.run, args.text_only, args.size, args.seed,
                              args.out)  # fmt: skip


@dataclass(frozen=True)
class PublishInputs:
    """What ``publish multi`` reads: the select step's plan."""

    plan_dir: Path = select_step_folder()
    root: tuple[str, ...] = root_overrides(ROOT_NAMES, "the plan")


STEPS = (
    Step(
        "ocr",
        "convert raw HTML pages and scanned exam pages into problem records (OCR, cached)",
        "Read EXAMS/html/*.html (with html/answer_key.json) and EXAMS/pages/*.png (with "
        "pages/answer_key.json) and write problem records in the release's own shape, their "
        "images and a report to --out. HTML: layout stripped, Markdown, tables, images, LaTeX. "
        "Scans: deskew, figures cropped, blanks to [MASK], OCR (rapidocr by default, its models "
        "inside its wheel; or tesseract, or easyocr with your weights: --backend), "
        "question/stem/options. OCR results are cached by page sha256 and the engine with its "
        "model files; a "
        "page that does not decode, an empty OCR or a page without an answer key is a counted "
        "skip named in the report.",
        OcrInputs,
        run_ocr,
        settings=(
            StepSettings(OcrSettings, ("multi", "ocr")),
            StepSettings(MultiSourceFolders, ("multi", "sources"), only=("exams",)),
        ),
    ),
    Step(
        "questions",
        "split every problem (release and converted) into questions and clean them",
        "Read the MULTI release and the ocr step's folder; one question per problem_content_list "
        "entry ({problem_id}_{i}), with type, points, options, image class, level and track; "
        "cleaning per multi.cleaning (hints removed, parallel blanks split, empty/duplicate "
        "options flagged), each change a recorded decision. Writes --out/questions.jsonl.",
        QuestionsInputs,
        run_questions,
        settings=(
            StepSettings(MultiPlanSettings, ("multi",)),
            StepSettings(MultiSourceFolders, ("multi", "sources"), only=("release",)),
        ),
    ),
    Step(
        "select",
        "remove near duplicates, apply the Appendix D selection, mark Elite, attach Extend",
        "Near duplicates across all questions (MinHash LSH + Jaccard on text, pHash on images; "
        "sub-quadratic), the paper's Appendix D selection on crawled problems (seeded), Elite "
        "from the release's hard list (or multi.elite.hard_list), and the Extend knowledge. "
        "Writes --out/questions.jsonl, removed.jsonl (the decision log) and extend.jsonl.",
        SelectInputs,
        run_select,
        settings=StepSettings(MultiPlanSettings, ("multi",)),
    ),
    Step(
        "elite",
        "re-draw an Elite hard list from judge runs (the authors' notebook, seeded)",
        "Score each --run against the plan, weight it by its own overall score, rank questions "
        "by failure score (ties: 1.5*difficulty + quality), fill the image-class x subject "
        "buckets (ceil(t/4) MA, floor(t/4) FB, the rest SA), and draw --size of the candidates "
        "with --seed. Writes a hard list in the release's format; this is a re-selection, not "
        "the published list.",
        EliteInputs,
        run_elite,
    ),
)
