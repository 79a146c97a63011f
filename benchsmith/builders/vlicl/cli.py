"""VL-ICL's command-line steps: ``benchsmith build vlicl plan|leakage`` and the publish flags.

Every option defaults to the ``vlicl:`` section of ``params.yaml`` (``--params``); a flag given
on the command line wins for that run. The raw sources are put in place by ``benchsmith source
prepare miniimagenet|clevr|textocr`` (``data/sources/<name>``); the DVC pipeline calls these same
commands. Nothing here imports a heavy library until a step runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchsmith.builders.vlicl.config import LeakageConfig, VliclPlanSettings, VliclSourceFolders
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
from benchsmith.core.params import build_settings, load_params, profile_of, section
from benchsmith.core.progress import log, print_json
from benchsmith.family.base import Step, StepSettings
from benchsmith.hf.roots import parse_root_flags

DEFAULT_PLAN = Path("data/vlicl/plan")
LEAKAGE_REPORT = "leakage.json"
ROOT_NAMES = ("miniimagenet", "clevr", "textocr", "ingest", "font")


def parse_roots(values: tuple[str, ...]) -> dict[str, str]:
    return parse_root_flags(list(values), ROOT_NAMES, "vlicl")


@dataclass(frozen=True)
class PlanInputs:
    """What ``build vlicl plan`` reads and writes."""

    json: bool = json_switch("counts per task")
    params: Path | None = params_file()
    out: Path = output_folder("plan folder", DEFAULT_PLAN)


def run_plan(args: PlanInputs, top: VliclPlanSettings, folders: VliclSourceFolders) -> int:
    """``top``: what the plan builds (``vlicl:`` and the flags given); ``folders``: where it
    reads (``vlicl.sources``)."""
    from benchsmith.builders.vlicl.config import VliclConfig
    from benchsmith.builders.vlicl.plan import VliclSources, build_vlicl

    params = load_params(args.params)
    settings = section(params, "vlicl")
    seed = top.seed if top.seed is not None else build_settings(params).seed
    config = VliclConfig.from_params(settings, profile_of(params), mode=top.mode, seed=seed,
                                     tasks=top.tasks, episode_seeds=top.episode_seeds,
                                     samplers=top.samplers)  # fmt: skip
    summary = build_vlicl(
        config,
        VliclSources(
            miniimagenet=folders.miniimagenet,
            clevr=folders.clevr,
            font=folders.font,
            ingest=folders.ingest_dir,
            textocr=folders.textocr,
        ),
        args.out,
    )
    print_json(
        {"mode": summary.mode, "counts": summary.counts, "episodes": summary.episodes}, args.json
    )
    return 0


@dataclass(frozen=True)
class LeakageInputs:
    """What ``build vlicl leakage`` reads and writes."""

    plan_dir: Path = earlier_step_folder("the plan step", DEFAULT_PLAN)
    json: bool = json_switch("leakage summary")
    out: Path | None = argument(f"report path (default: {LEAKAGE_REPORT} next to PLAN_DIR)",
                                metavar="FILE")  # fmt: skip
    metrics: Path | None = metrics_file("leakage summary")
    root: tuple[str, ...] = root_overrides(ROOT_NAMES, "the build")
    params: Path | None = params_file()


def run_leakage(args: LeakageInputs, settings: LeakageConfig) -> int:
    from benchsmith.builders.vlicl.leakage import check_vlicl_leakage

    out = args.out or args.plan_dir.parent / LEAKAGE_REPORT
    report = check_vlicl_leakage(
        args.plan_dir,
        settings.image_threshold,
        out_path=out,
        workers=settings.workers,
        executor=settings.executor,
        roots_override=parse_roots(args.root),
    )
    summary = report["summary"]
    log(
        f"vlicl leakage: {summary['removed_queries']} leaking queries to remove, "
        f"{summary['exact_pairs']} exact / {summary['near_pairs']} near duplicate pairs "
        f"-> {out}"
    )
    write_metrics(args.metrics, summary)
    print_json(summary, args.json, sort_keys=True)
    return 0


@dataclass(frozen=True)
class PublishInputs:
    """What ``publish vlicl`` reads: the plan and its leakage report."""

    plan_dir: Path = earlier_step_folder("the plan step", DEFAULT_PLAN)
    leakage: Path | None = argument(
        f"leakage report (default: {LEAKAGE_REPORT} next to PLAN_DIR; one inside it, where "
        "0.1 wrote it, is read too)",
        metavar="FILE",
    )
    root: tuple[str, ...] = root_overrides(ROOT_NAMES, "the build")

    def leakage_report(self) -> Path:
        from benchsmith.builders.vlicl.publication import default_leakage_report

        return self.leakage or default_leakage_report(self.plan_dir)


STEPS = (
    Step(
        "plan",
        "write the plan folder: support/query rows per task and the episodes",
        "Write PLAN/build_info.json, PLAN/tasks/<task>/{support,query}.jsonl, PLAN/episodes.jsonl "
        "and PLAN/rendered/ (operator images, TextOCR images with their red box). Source images "
        "stay in their folders and are embedded at publish. Deterministic: same sources and "
        "params, same bytes. The sources default to those `benchsmith source prepare "
        "miniimagenet|clevr|textocr` put in data/sources/.",
        PlanInputs,
        run_plan,
        settings=(
            StepSettings(VliclPlanSettings, ("vlicl",)),
            StepSettings(VliclSourceFolders, ("vlicl", "sources")),
        ),
    ),
    Step(
        "leakage",
        "check support/query leakage per task and write leakage.json",
        "Hash every support and query image (pixel sha256 + pHash) and report exact and near "
        "duplicates between the support and query of each task, shared classes (matching_mi "
        "must be disjoint), shared operator expressions and episodes that show the query's own "
        "expression. Leaking queries are listed as removed; publish drops them. Writes "
        "leakage.json next to the plan (or --out) and prints the summary as JSON.",
        LeakageInputs,
        run_leakage,
        settings=StepSettings(LeakageConfig, ("vlicl", "leakage")),
    ),
)
