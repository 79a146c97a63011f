"""MMIU's command-line steps: ``benchsmith build mmiu plan|check|rehydrate`` and publish flags.

Every option defaults to the ``mmiu:`` section of ``params.yaml`` (``--params``); a flag given
on the command line wins for that run. ``benchsmith source prepare scannet|coco`` puts the raw
sources in ``data/sources/``; the DVC pipeline calls these same commands.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchsmith.builders.mmiu.config import (
    MmiuPlanSettings,
    MmiuSourceFolders,
    ScenePlanSettings,
    ShortcutGate,
)
from benchsmith.core.command_inputs import (
    argument,
    earlier_step_folder,
    json_switch,
    metrics_file,
    output_folder,
    params_file,
    root_overrides,
)
from benchsmith.core.executor import ExecutorConfig
from benchsmith.core.metrics import write_metrics
from benchsmith.core.params import build_settings, load_params, profile_of, section
from benchsmith.core.progress import log, print_json
from benchsmith.core.settings import declared
from benchsmith.family.base import PublishRequest, Step, StepSettings
from benchsmith.hf.roots import parse_root_flags

DEFAULT_PLAN = Path("data/mmiu/plan")
ROOT_NAMES = ("scannet", "coco", "release")


def parse_roots(values: tuple[str, ...]) -> dict[str, str]:
    return parse_root_flags(list(values), ROOT_NAMES, "mmiu")


@dataclass(frozen=True)
class PlanInputs:
    """What ``build mmiu plan`` reads and writes."""

    json: bool = json_switch("items per task")
    params: Path | None = params_file()
    out: Path = output_folder("plan folder", DEFAULT_PLAN)


def run_plan(
    args: PlanInputs, top: MmiuPlanSettings, survey: ScenePlanSettings, folders: MmiuSourceFolders
) -> int:
    """``top``: what the plan builds (``mmiu:``); ``survey``: where it runs (``mmiu.plan``);
    ``folders``: where it reads (``mmiu.sources``)."""
    from benchsmith.builders.mmiu.config import MmiuConfig
    from benchsmith.builders.mmiu.plan import MmiuSources, build_mmiu

    params = load_params(args.params)
    seed = top.seed if top.seed is not None else build_settings(params).seed
    config = MmiuConfig.from_settings(top, section(params, "mmiu"), profile_of(params), seed)
    sources = MmiuSources(folders.scannet, folders.coco, folders.ingest_dir)
    executor = ExecutorConfig(survey.executor, survey.workers)
    cache = Path(survey.cache_dir or declared(ScenePlanSettings)["cache_dir"][0].default)
    summary = build_mmiu(config, sources, args.out, executor, cache)
    log(f"mmiu plan: {sum(summary.counts.values())} items in {len(summary.counts)} tasks "
        f"-> {args.out}")  # fmt: skip
    print_json({"counts": summary.counts, "skips": summary.skips}, args.json)
    return 0


@dataclass(frozen=True)
class CheckInputs:
    """What ``build mmiu check`` reads and writes."""

    plan_dir: Path = earlier_step_folder("the plan step", DEFAULT_PLAN)
    json: bool = json_switch("shortcut verdicts")
    out: Path | None = argument(
        "report path (default: shortcuts.json next to PLAN_DIR)", metavar="FILE"
    )
    metrics: Path | None = metrics_file("shortcut summary")
    params: Path | None = params_file()


def run_check(args: CheckInputs, gate: ShortcutGate) -> int:
    from benchsmith.builders.mmiu.shortcuts import check_plan

    client = None
    if gate.text_only_model:
        from benchsmith.core.llm import LLMClient, LLMConfig

        cache = Path(gate.cache_dir or declared(ShortcutGate)["cache_dir"][0].default)
        client = LLMClient(LLMConfig(model=gate.text_only_model, base_url=gate.base_url,
                                     cache_dir=cache, max_tokens=16))  # fmt: skip
    out = args.out or args.plan_dir.parent / "shortcuts.json"
    report = check_plan(args.plan_dir, gate, out, client)
    summary = {task: r["verdict"] for task, r in report["tasks"].items()}
    for task, r in report["tasks"].items():
        why = f"; {', '.join(r['why'])}" if r["why"] else ""
        log(f"mmiu check: {task}: {r['verdict']} (chance {r['chance']:.3f}, best blind rule "
            f"{r['best_rule']} lift {r['best_lift']:+.3f}{why})")  # fmt: skip
    write_metrics(args.metrics, {"failed": len(report["failed"]),
                                 "best_lift": {t: r["best_lift"]
                                               for t, r in report["tasks"].items()}})  # fmt: skip
    print_json(summary, args.json, sort_keys=True)
    if report["failing_in_release"]:
        log(f"mmiu check: the ingested release fails the gate in {report['failing_in_release']} "
            "(reported in the card; an ingest is described, not gated)")  # fmt: skip
    if report["failed"]:
        log(f"mmiu check: FAILED {report['failed']}: a blind rule beats chance (report: {out}); "
            "fix the distractors or list the config in mmiu.shortcuts.allow")  # fmt: skip
        return 1
    return 0


@dataclass(frozen=True)
class RehydrateInputs:
    """What ``build mmiu rehydrate`` reads and writes."""

    dataset: Path = argument(
        "a published MMIU folder whose ScanNet images are references",
        positional=True,
        metavar="DATASET",
    )
    out: Path = argument(
        "the new folder, every image embedded (not for sharing)", required=True, metavar="DIR"
    )
    scannet: Path | None = argument(
        "your ScanNet v2 root (holding scans/), for a rebuilt dataset", metavar="DIR"
    )
    release: Path | None = argument(
        "your copy of the official release, for an ingested dataset", metavar="DIR"
    )
    max_shard_mb: float = argument("shard size limit (default 256)", default=256.0, metavar="MiB")


def run_rehydrate(args: RehydrateInputs) -> PublishRequest:
    from benchsmith.builders.mmiu.rehydrate import rehydrate

    return rehydrate(args.dataset, args.scannet, args.out, args.max_shard_mb, release=args.release)


@dataclass(frozen=True)
class PublishInputs:
    """What ``publish mmiu`` reads: the plan and its shortcut report (the rest is
    ``mmiu.publish``: :class:`benchsmith.builders.mmiu.config.MmiuPublishSettings`)."""

    plan_dir: Path = earlier_step_folder("the plan step", DEFAULT_PLAN)
    shortcuts: Path | None = argument(
        "report of `build mmiu check` (default: shortcuts.json next to PLAN_DIR)", metavar="FILE"
    )
    root: tuple[str, ...] = root_overrides(ROOT_NAMES, "the plan")


STEPS = (
    Step(
        "plan",
        "draw every item of every task: frames, options, images as references",
        "Write PLAN/build_info.json and PLAN/items/<task>.jsonl from your ScanNet v2 copy (the "
        "3d_* tasks and visual_correspondence_scannet) and COCO 2014 val (jigsaw and spatial "
        "transform). Frame choice, option style and sizes come from mmiu: in params.yaml. "
        "Images are references re-rendered at publish. Deterministic: same sources and params, "
        "same bytes.",
        PlanInputs,
        run_plan,
        settings=(
            StepSettings(MmiuPlanSettings, ("mmiu",)),
            StepSettings(ScenePlanSettings, ("mmiu", "plan")),
            StepSettings(MmiuSourceFolders, ("mmiu", "sources")),
        ),
    ),
    Step(
        "check",
        "the shortcut gate: cheap rules, pixels, positions and a learned model against chance",
        "Answer every item of the plan without the skill: option-only rules (closest to "
        "identity, most decimals, odd format, middle option, longest, ...), image and position "
        "rules on the rendered images (a candidate's likeness to the reference views, file "
        "sizes, a point's distance from REF's position), option recurrence across items, a "
        "learned options-only model scored on held-out items and, if configured, a text-only "
        "LLM. Report each against chance and fail (exit 1) any config whose best rule beats "
        "chance by more than mmiu.shortcuts.max_gain at the set confidence (for the config's "
        "rules together), unless mmiu.shortcuts.allow lists it. Writes shortcuts.json next to "
        "the plan (or --out); publish refuses a plan without a passing report.",
        CheckInputs,
        run_check,
        settings=StepSettings(ShortcutGate, ("mmiu", "shortcuts")),
    ),
    Step(
        "rehydrate",
        "embed the ScanNet images of a reference-only dataset from your own ScanNet copy",
        "Read a published MMIU folder whose ScanNet images are references (scene, frame, "
        "sha256), render each from your ScanNet .sens streams, check its sha256, and write a "
        "complete copy to --out (every image embedded; keep it private: ScanNet's terms forbid "
        "redistribution). A missing scene or a mismatching frame is an error naming it.",
        RehydrateInputs,
        run_rehydrate,
    ),
)
