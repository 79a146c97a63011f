"""MMIU's command-line steps: ``benchsmith build mmiu plan|check|rehydrate`` and publish flags.

Every option defaults to the ``mmiu:`` section of ``params.yaml`` (``--params``); a flag given
on the command line wins for that run. ``benchsmith source prepare scannet|coco`` puts the raw
sources in ``data/sources/``; the DVC pipeline calls these same commands.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from benchsmith.builders.mmiu.config import ScenePlanSettings, ShortcutGate
from benchsmith.core.executor import ExecutorConfig, add_executor_arguments
from benchsmith.core.metrics import add_metrics_option, write_metrics
from benchsmith.core.params import add_params_option, load_params, profile_of, section
from benchsmith.core.progress import add_json_option, log, print_json
from benchsmith.core.settings import declared
from benchsmith.family.base import PublishRequest, Step, StepSettings
from benchsmith.hf.roots import add_roots_argument, parse_root_flags

DEFAULT_PLAN = Path("data/mmiu/plan")
DEFAULT_SOURCES = {
    "scannet": Path("data/sources/scannet/ScanNet"),
    "coco": Path("data/sources/coco"),
}
ROOT_NAMES = ("scannet", "coco", "release")


def add_roots_option(parser: argparse.ArgumentParser) -> None:
    add_roots_argument(parser, ROOT_NAMES, "the plan")


def parse_roots(values: list[str]) -> dict[str, str]:
    return parse_root_flags(values, ROOT_NAMES, "mmiu")


def add_plan_arguments(plan: argparse.ArgumentParser) -> None:
    add_json_option(plan, "items per task")
    plan.add_argument("--scannet", type=Path, metavar="DIR",
                      help="ScanNet v2 root holding scans/ and scannetv2-labels.combined.tsv "
                      f"(default: mmiu.sources.scannet, {DEFAULT_SOURCES['scannet']})")  # fmt: skip
    plan.add_argument("--coco", type=Path, metavar="DIR",
                      help="COCO root holding annotations/ and val2014/ (default: "
                      f"mmiu.sources.coco, {DEFAULT_SOURCES['coco']})")  # fmt: skip
    plan.add_argument("--mode", choices=("rebuild", "ingest"),
                      help="rebuild: our construction from ScanNet and COCO (default, "
                      "mmiu.mode); ingest: read the official MMIU release into the same schema "
                      "and flag its known faults")  # fmt: skip
    plan.add_argument("--ingest-dir", type=Path, metavar="DIR",
                      help="the unzipped official release: all.parquet and the relationship "
                      "image folders (ingest mode; default: mmiu.sources.ingest_dir)")  # fmt: skip
    plan.add_argument("--tasks", nargs="+", metavar="TASK", help="tasks to build (default: all)")
    plan.add_argument("--seed", type=int, metavar="S",
                      help="build seed (default: mmiu.seed, else the params seed)")  # fmt: skip
    add_params_option(plan)
    plan.add_argument("--out", type=Path, default=DEFAULT_PLAN, metavar="DIR",
                      help=f"plan folder (replaced atomically; default {DEFAULT_PLAN})")  # fmt: skip


def mmiu_config(params: dict[str, Any], args: argparse.Namespace):
    from benchsmith.builders.mmiu.config import MmiuConfig

    settings = section(params, "mmiu")
    seed = getattr(args, "seed", None)
    if seed is None:
        seed = settings.get("seed") if settings.get("seed") is not None else params.get("seed")
    return MmiuConfig.from_params(
        settings,
        profile_of(params),
        seed=seed,
        tasks=getattr(args, "tasks", None),
        mode=getattr(args, "mode", None),
    )


def run_plan(args: argparse.Namespace, survey: ScenePlanSettings) -> int:
    from benchsmith.builders.mmiu.plan import MmiuSources, build_mmiu

    params = load_params(args.params)
    configured = section(params, "mmiu", "sources")
    folders = {
        name: flag or configured.get(name) or DEFAULT_SOURCES[name]
        for name, flag in (("scannet", args.scannet), ("coco", args.coco))
    }
    config = mmiu_config(params, args)
    release = args.ingest_dir or configured.get("ingest_dir")
    sources = MmiuSources(
        Path(folders["scannet"]), Path(folders["coco"]), Path(release) if release else None
    )
    executor = ExecutorConfig(survey.executor, survey.workers)
    cache = Path(survey.cache_dir or declared(ScenePlanSettings)["cache_dir"][0].default)
    summary = build_mmiu(config, sources, args.out, executor, cache)
    log(f"mmiu plan: {sum(summary.counts.values())} items in {len(summary.counts)} tasks "
        f"-> {args.out}")  # fmt: skip
    print_json({"counts": summary.counts, "skips": summary.skips}, args.json)
    return 0


def add_check_arguments(check: argparse.ArgumentParser) -> None:
    add_json_option(check, "shortcut verdicts")
    check.add_argument("plan_dir", type=Path, metavar="PLAN_DIR", help="folder of the plan step")
    check.add_argument("--out", type=Path, metavar="FILE",
                       help="report path (default: shortcuts.json next to PLAN_DIR)")  # fmt: skip
    add_metrics_option(check, "shortcut summary")
    add_params_option(check)


def run_check(args: argparse.Namespace, gate: ShortcutGate) -> int:
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


def add_rehydrate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dataset", type=Path, metavar="DATASET",
                        help="a published MMIU folder whose ScanNet images are references")  # fmt: skip
    parser.add_argument("--scannet", type=Path, metavar="DIR",
                        help="your ScanNet v2 root (holding scans/), for a rebuilt dataset")  # fmt: skip
    parser.add_argument("--release", type=Path, metavar="DIR",
                        help="your copy of the official release, for an ingested dataset")  # fmt: skip
    parser.add_argument("--out", type=Path, required=True, metavar="DIR",
                        help="the new folder, every image embedded (not for sharing)")  # fmt: skip
    parser.add_argument("--max-shard-mb", type=float, default=256.0, metavar="MiB",
                        help="shard size limit (default 256)")  # fmt: skip


def run_rehydrate(args: argparse.Namespace) -> PublishRequest:
    from benchsmith.builders.mmiu.rehydrate import rehydrate

    return rehydrate(args.dataset, args.scannet, args.out, args.max_shard_mb, release=args.release)


def add_publish_arguments(publish: argparse.ArgumentParser) -> None:
    publish.add_argument("plan_dir", type=Path, metavar="PLAN_DIR", help="folder of the plan step")
    publish.add_argument("--shortcuts", type=Path, metavar="FILE",
                         help="report of `build mmiu check` (default: shortcuts.json next to "
                         "PLAN_DIR)")  # fmt: skip
    publish.add_argument("--scannet-images", choices=("reference", "embed"),
                         help="reference: ScanNet images as scene/frame/sha256 (shareable; "
                         "the default, mmiu.publish.scannet_images); embed: bytes (private use)")  # fmt: skip
    add_executor_arguments(publish, "images are rendered (a few rows per task)", "mmiu.publish")
    add_roots_option(publish)


STEPS = (
    Step(
        "plan",
        "draw every item of every task: frames, options, images as references",
        "Write PLAN/build_info.json and PLAN/items/<task>.jsonl from your ScanNet v2 copy (the "
        "3d_* tasks and visual_correspondence_scannet) and COCO 2014 val (jigsaw and spatial "
        "transform). Frame choice, option style and sizes come from mmiu: in params.yaml. "
        "Images are references re-rendered at publish. Deterministic: same sources and params, "
        "same bytes.",
        add_plan_arguments,
        run_plan,
        settings=StepSettings(ScenePlanSettings, ("mmiu", "plan")),
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
        add_check_arguments,
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
        add_rehydrate_arguments,
        run_rehydrate,
    ),
)
