"""MMNeedle's command-line steps: ``benchsmith build mmneedle twins|plan|render|check-images``.

Every option defaults to ``params.yaml`` (``--params``); a flag given on the command line wins
for that run. Every path defaults to where the DVC pipeline (``dvc.yaml``) reads and writes it:
COCO from ``mmneedle.sources.coco``, the plan in ``data/mmneedle/plan`` (``PLAN_DIR``, the
argument of the later steps), the render and the reports next to it. The generic CLI mounts
:data:`STEPS` under ``benchsmith build mmneedle`` and the publish flags under ``benchsmith
publish mmneedle``; nothing here imports a heavy library until a step runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchsmith.builders.mmneedle.config import (
    ImageCheckConfig,
    MmneedleSourceFolders,
    PlanConfig,
    PlanSettings,
    RenderConfig,
)
from benchsmith.core.command_inputs import (
    argument,
    earlier_step_folder,
    json_switch,
    metrics_file,
    output_folder,
    params_file,
)
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.json_files import load_json
from benchsmith.core.metrics import write_metrics
from benchsmith.core.params import DEFAULT_PARAMS_FILE, build_settings, load_params, profile_of
from benchsmith.core.progress import log, print_json
from benchsmith.family.base import Step, StepSettings

DEFAULT_LOCK_PATH = Path("coco.lock.json")
DEFAULT_PLAN = Path("data/mmneedle/plan")
DEFAULT_RENDER = Path("data/mmneedle/render")
DEFAULT_TWINS = Path("data/mmneedle/twins.json")
TWINS_REPORT = "twins.json"
IMAGE_CHECK_REPORT = "image_check.json"
CAPTIONS_HELP = "COCO captions_val2014.json (default: COCO/annotations/ of --coco)"
IMAGES_HELP = "COCO val2014/ folder (default: COCO/val2014 of --coco)"
SOURCES = StepSettings(MmneedleSourceFolders, ("mmneedle", "sources"))


def plan_folder() -> Path:
    return earlier_step_folder("`build mmneedle plan`", DEFAULT_PLAN, old_flag="--plan")


def next_to(plan_dir: Path, name: str) -> Path:
    """A file or folder the pipeline keeps beside the plan (``data/mmneedle/NAME``)."""
    return plan_dir.parent / name


def recorded_images_dir(plan_dir: Path) -> Path | None:
    """The val2014/ folder the plan step recorded (render and check-images read it)."""
    info = plan_dir / "plan_info.json"
    if not info.is_file():
        return None
    recorded = load_json(info, what="MMNeedle plan info",
                         fix="rerun `benchsmith build mmneedle plan`").get("images_dir")  # fmt: skip
    return Path(recorded) if recorded else None


@dataclass(frozen=True)
class PlanInputs:
    """What ``build mmneedle plan`` reads and writes (its settings: :class:`PlanSettings`)."""

    captions: Path | None = argument(CAPTIONS_HELP, metavar="FILE")
    out: Path = output_folder("plan folder", DEFAULT_PLAN)
    json: bool = json_switch("per-config QA report")
    images: Path | None = argument(
        "COCO val2014/ folder, recorded for render (default: next to the captions' annotations/)",
        metavar="DIR",
    )
    twins: Path | None = argument(
        "report of `build mmneedle twins`: the canonical plan keeps one image per twin group, "
        "the legacy plan flags the samples twins spoil (default: twins.json next to --out, if "
        "there; without one: ids only)",
        metavar="FILE",
    )
    seed: int | None = argument("seed (default: params seed)", metavar="S")
    params: Path | None = params_file()


def run_plan(args: PlanInputs, settings: PlanSettings, folders: MmneedleSourceFolders) -> int:
    from benchsmith.builders.mmneedle.plan import plan_mmneedle, write_plan
    from benchsmith.sources.coco.reader import default_images_dir, read_captions

    params = load_params(args.params)
    seed = args.seed if args.seed is not None else build_settings(params).seed
    config = PlanConfig.from_settings(settings, seed)
    found = args.params or (DEFAULT_PARAMS_FILE if DEFAULT_PARAMS_FILE.exists() else None)
    log(
        f"mmneedle plan: {len(config.settings())} configs x {config.samples_per_config} samples, "
        f"pools of {config.pool_size}, {config.order} order; settings from "
        + (
            f"{found} (profile {profile_of(params)})"
            if found
            else "built-in defaults: no "
            "params.yaml here, so the sample profile's sizes, as in every family (a params.yaml "
            "with profile: full, or --pool-size and --samples, for the benchmark's)"
        )
    )
    captions = folders.captions(args.captions)
    source = read_captions(captions)
    images_dir = args.images or (
        default_images_dir(captions) if args.captions else folders.images(None)
    )
    for reason, count in source.skipped.items():
        log(f"mmneedle plan: skipped {count} ({reason.replace('_', ' ')}) in {captions}")
    twins = None
    twins_path = args.twins or next_to(args.out, TWINS_REPORT)
    if args.twins is not None or twins_path.is_file():
        from benchsmith.builders.mmneedle.twins import read_twins

        log(f"mmneedle plan: twin groups from {twins_path}")
        twins = read_twins(twins_path, source)
    else:
        log(f"mmneedle plan: no twins report ({twins_path} is not there; `build mmneedle twins` "
            "writes it): images are told apart by COCO id only")  # fmt: skip
    plan = plan_mmneedle(source, config, twins=twins)
    info = write_plan(plan, source, args.out, images_dir)
    log(
        f"mmneedle plan ({config.order}): {len(info['configs'])} configs x "
        f"{config.samples_per_config} samples, pools of {config.pool_size} for grids "
        f"{list(config.grids)} -> {args.out}"
    )
    if config.order == "legacy":
        for name, report in info["configs"].items():
            if any(v for k, v in report.items() if k != "samples"):
                log(
                    f"  {name}: {report['haystacks_with_duplicate_image']} haystacks with a "
                    f"duplicate picture, {report['ambiguous_gold_answers']} ambiguous gold "
                    f"answers, {report['repeated_needle_slots']} repeated slots, "
                    f"{report['samples_with_twin_needle']} samples whose needle has a twin in "
                    "the haystack"
                )
    problems = {
        key: sum(report[key] for report in info["configs"].values())
        for key in (
            "haystacks_with_duplicate_image",
            "ambiguous_gold_answers",
            "samples_with_twin_needle",
        )
    }
    log(
        "mmneedle plan QA: "
        + ", ".join(f"{n} {key.replace('_', ' ')}" for key, n in problems.items())
        + f"; {sum((info['skipped'] or {}).values())} skipped source entries (plan.json has the detail)"
    )
    print_json(
        {"configs": info["configs"], "stats": info["stats"], "skipped": info["skipped"]}, args.json
    )
    return 0


@dataclass(frozen=True)
class RenderInputs:
    """What ``build mmneedle render`` reads and writes."""

    plan_dir: Path = plan_folder()
    out: Path = output_folder("render folder", DEFAULT_RENDER)
    images: Path | None = argument(
        "COCO val2014/ folder (default: the one recorded in the plan)", metavar="DIR"
    )
    params: Path | None = params_file()


def run_render(args: RenderInputs, config: RenderConfig) -> int:
    """``config``: ``mmneedle.render`` with the flags given (the CLI builds it from the
    settings declared on :class:`RenderConfig`). The workers' fork server starts first: it
    loads the kernels while this process imports the render and reads the plan."""
    from benchsmith.builders.mmneedle.render_workers import start_render_workers_early

    start_render_workers_early(config)
    from benchsmith.builders.mmneedle.render import render_mmneedle

    info = render_mmneedle(args.plan_dir, args.out, config, args.images)
    log(
        f"mmneedle render: {info['stitched_images']} stitched images from "
        f"{info['source_images']} source files -> {args.out}"
    )
    return 0


@dataclass(frozen=True)
class TwinsInputs:
    """What ``build mmneedle twins`` reads and writes."""

    captions: Path | None = argument(CAPTIONS_HELP, metavar="FILE")
    images: Path | None = argument(IMAGES_HELP, metavar="DIR")
    out: Path = argument(f"JSON report (default {DEFAULT_TWINS})", default=DEFAULT_TWINS,
                         metavar="FILE")  # fmt: skip
    params: Path | None = params_file()
    metrics: Path | None = metrics_file("twin")


def run_twins(args: TwinsInputs, settings: ImageCheckConfig, folders: MmneedleSourceFolders) -> int:
    from benchsmith.builders.mmneedle.twins import find_coco_twins, twins_metrics, write_twins

    report = find_coco_twins(folders.captions(args.captions), folders.images(args.images),
                             settings.near_threshold, settings.workers,
                             settings.executor)  # fmt: skip
    write_twins(report, args.out)
    write_metrics(args.metrics, twins_metrics(report))
    return 0


@dataclass(frozen=True)
class CheckInputs:
    """What ``build mmneedle check-images`` reads and writes."""

    plan_dir: Path = plan_folder()
    images: Path | None = argument(
        "COCO val2014/ folder (default: the one recorded in the plan)", metavar="DIR"
    )
    out: Path | None = argument(f"JSON report (default: {IMAGE_CHECK_REPORT} next to PLAN_DIR)",
                                metavar="FILE")  # fmt: skip
    params: Path | None = params_file()
    metrics: Path | None = metrics_file("duplicate")


def run_check_images(args: CheckInputs, settings: ImageCheckConfig) -> int:
    from benchsmith.builders.mmneedle.image_check import (
        check_mmneedle_images,
        image_check_metrics,
        write_image_check,
    )

    images = args.images or recorded_images_dir(args.plan_dir)
    if images is None:
        raise BenchsmithError(
            "no COCO images folder: the plan records none",
            path=args.plan_dir / "plan_info.json",
            fix="pass --images pointing at val2014/, or run `benchsmith build mmneedle plan` first",
        )
    report = check_mmneedle_images(args.plan_dir, images, settings.near_threshold,
                                   settings.workers, settings.executor)  # fmt: skip
    out = args.out or next_to(args.plan_dir, IMAGE_CHECK_REPORT)
    write_image_check(report, out)
    log(f"mmneedle check-images: report -> {out}")
    write_metrics(args.metrics, image_check_metrics(report))
    return 0


@dataclass(frozen=True)
class PublishInputs:
    """What ``publish mmneedle`` reads: the plan, the render and the reports to record."""

    plan_dir: Path = plan_folder()
    render: Path | None = argument(
        "folder of `build mmneedle render` (default: render/ next to PLAN_DIR)", metavar="DIR"
    )
    lock: Path = argument(
        f"COCO archive lock file to record, if present (default: {DEFAULT_LOCK_PATH})",
        default=DEFAULT_LOCK_PATH,
        metavar="FILE",
    )
    image_check: Path | None = argument(
        f"report of `build mmneedle check-images` to put in the card (default: "
        f"{IMAGE_CHECK_REPORT} next to PLAN_DIR, if there)",
        metavar="FILE",
    )

    def render_dir(self) -> Path:
        return self.render or next_to(self.plan_dir, "render")

    def image_check_report(self) -> Path | None:
        if self.image_check is not None:
            return self.image_check
        found = next_to(self.plan_dir, IMAGE_CHECK_REPORT)
        return found if found.is_file() else None


STEPS = (
    Step(
        "twins",
        "find COCO images that are one picture under several ids (before the plan)",
        "Hash every image that has a caption (sha256 of the decoded pixels and a 64-bit "
        "perceptual hash) and group twins: equal pixels, or hashes within --near-threshold "
        "bits, linked transitively. Writes a JSON report (groups, the id each group keeps) that "
        "`plan --twins` reads: the canonical plan keeps one image per group, so no haystack "
        "shows a picture twice, no negative's needle has a twin in its haystack and every "
        "positive's gold is unique by pixels; the legacy plan flags the samples twins spoil.",
        TwinsInputs,
        run_twins,
        settings=(StepSettings(ImageCheckConfig, ("mmneedle", "image_check")), SOURCES),
    ),
    Step(
        "plan",
        "choose the COCO images of every stitched image and sample (needs only the captions)",
        "Write DIR/pools/n{N}.parquet (one row per stitched image: stitched_id, grid, cells), "
        "DIR/samples/m{M}_n{N}_k{K}.parquet (one row per sample), images.parquet and "
        "plan_info.json. Deterministic: the same captions file and params give byte-identical "
        "tables.",
        PlanInputs,
        run_plan,
        settings=(StepSettings(PlanSettings, ("mmneedle",)), SOURCES),
    ),
    Step(
        "render",
        "decode, resize, stitch and encode every stitched image of a plan",
        "Render every pool of a plan into DIR/stitched/n{N}.parquet (JPEG bytes + sha256) and "
        "record the sha256 of every source file. Each source image is decoded and resized once; "
        "--workers processes write the stitched JPEGs. When --cell-size is a multiple of 16, each "
        "cell is JPEG-encoded once and every stitched image is assembled from its cells' "
        "encoded bits (the bytes Pillow writes for the pasted canvas, about 10x faster than "
        "encoding it). An interrupted render resumes from the grids already finished.",
        RenderInputs,
        run_render,
        settings=StepSettings(RenderConfig, ("mmneedle", "render")),
    ),
    Step(
        "check-images",
        "verify a plan by pixels: duplicate pictures inside each haystack (after the plan)",
        "Hash every source image the plan uses (sha256 of decoded pixels and a 64-bit perceptual "
        "hash), then report stitched images and sample haystacks that show the same picture "
        "twice (exact) or a near duplicate (Hamming distance <= --near-threshold). The plan "
        "already rules out repeated COCO ids; this catches the same picture under two ids. "
        "Writes a JSON report that publish puts in the card.",
        CheckInputs,
        run_check_images,
        settings=StepSettings(ImageCheckConfig, ("mmneedle", "image_check")),
    ),
)
