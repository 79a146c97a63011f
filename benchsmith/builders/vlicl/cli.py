"""VL-ICL's command-line steps: ``benchsmith build vlicl plan|leakage`` and the publish flags.

Every option defaults to the ``vlicl:`` section of ``params.yaml`` (``--params``); a flag given
on the command line wins for that run. The raw sources are put in place by ``benchsmith source
prepare miniimagenet|clevr`` (``data/sources/<name>``); the DVC pipeline calls these same
commands. Nothing here imports a heavy library until a step runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from benchsmith.builders.vlicl.config import LeakageConfig
from benchsmith.core.metrics import add_metrics_option, write_metrics
from benchsmith.core.params import add_params_option, load_params, profile_of, section
from benchsmith.core.progress import add_json_option, log, print_json
from benchsmith.family.base import Step, StepSettings
from benchsmith.hf.roots import add_roots_argument, parse_root_flags

DEFAULT_PLAN = Path("data/vlicl/plan")
DEFAULT_SOURCES = {
    "miniimagenet": Path("data/sources/miniimagenet"),
    "clevr": Path("data/sources/clevr/CLEVR_v1.0"),
}
ROOT_NAMES = ("miniimagenet", "clevr", "ingest", "font")


def add_roots_option(parser: argparse.ArgumentParser) -> None:
    add_roots_argument(parser, ROOT_NAMES, "the build")


def parse_roots(values: list[str]) -> dict[str, str]:
    return parse_root_flags(values, ROOT_NAMES, "vlicl")


def add_plan_arguments(plan: argparse.ArgumentParser) -> None:
    add_json_option(plan, "counts per task")
    plan.add_argument(
        "--mode",
        choices=("rebuild", "ingest"),
        help="rebuild: our construction from the raw sources (default); ingest: read the "
        "official VL-ICL release (faithful, versioned separately)",
    )
    plan.add_argument(
        "--ingest-dir",
        type=Path,
        metavar="DIR",
        help="VL-ICL release folder holding <task>/query.json (ingest mode)",
    )
    plan.add_argument(
        "--miniimagenet",
        type=Path,
        metavar="DIR",
        help=f"MiniImageNet root (default: vlicl.sources.miniimagenet, "
        f"{DEFAULT_SOURCES['miniimagenet']})",
    )
    plan.add_argument(
        "--clevr",
        type=Path,
        metavar="DIR",
        help=f"the CLEVR_v1.0 folder (default: vlicl.sources.clevr, {DEFAULT_SOURCES['clevr']})",
    )
    plan.add_argument(
        "--font",
        type=Path,
        metavar="TTF",
        help="font for the operator images (default: Pillow's embedded font; sha256 recorded)",
    )
    plan.add_argument("--tasks", nargs="+", metavar="TASK", help="tasks to build (default: all)")
    plan.add_argument(
        "--seed", type=int, metavar="S", help="build seed (default: vlicl.seed, else params seed)"
    )
    add_params_option(plan)
    plan.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_PLAN,
        metavar="DIR",
        help=f"plan folder (replaced atomically; default {DEFAULT_PLAN})",
    )


def source_folders(settings: dict[str, Any], args: argparse.Namespace) -> dict[str, Path | None]:
    """Source folders: flags, then ``vlicl.sources``, then the prepared ``data/sources``."""
    configured = section(settings, "sources")
    out: dict[str, Path | None] = {}
    for name, flag in (
        ("miniimagenet", args.miniimagenet),
        ("clevr", args.clevr),
        ("font", args.font),
        ("ingest", args.ingest_dir),
    ):
        value = flag or configured.get(name if name != "ingest" else "ingest_dir")
        value = value or DEFAULT_SOURCES.get(name)
        out[name] = Path(value) if value else None
    return out


def run_plan(args: argparse.Namespace) -> int:
    from benchsmith.builders.vlicl.config import VliclConfig
    from benchsmith.builders.vlicl.plan import VliclSources, build_vlicl

    params = load_params(args.params)
    settings = section(params, "vlicl")
    seed = args.seed if args.seed is not None else settings.get("seed", params.get("seed"))
    config = VliclConfig.from_params(
        settings, profile_of(params), mode=args.mode, seed=seed, tasks=args.tasks
    )
    summary = build_vlicl(config, VliclSources(**source_folders(settings, args)), args.out)
    print_json(
        {"mode": summary.mode, "counts": summary.counts, "episodes": summary.episodes}, args.json
    )
    return 0


def add_leakage_arguments(leakage: argparse.ArgumentParser) -> None:
    add_json_option(leakage, "leakage summary")
    leakage.add_argument("plan_dir", type=Path, metavar="PLAN_DIR", help="folder of the plan step")
    leakage.add_argument(
        "--out", type=Path, metavar="FILE", help="report path (default: PLAN_DIR/leakage.json)"
    )
    add_metrics_option(leakage, "leakage summary")
    add_roots_option(leakage)
    add_params_option(leakage)


def run_leakage(args: argparse.Namespace, settings: LeakageConfig) -> int:
    from benchsmith.builders.vlicl.leakage import check_vlicl_leakage

    report = check_vlicl_leakage(
        args.plan_dir,
        settings.image_threshold,
        out_path=args.out,
        workers=settings.workers,
        executor=settings.executor,
        roots_override=parse_roots(args.root),
    )
    summary = report["summary"]
    log(
        f"vlicl leakage: {summary['removed_queries']} leaking queries to remove, "
        f"{summary['exact_pairs']} exact / {summary['near_pairs']} near duplicate pairs "
        f"-> {args.out or args.plan_dir / 'leakage.json'}"
    )
    write_metrics(args.metrics, summary)
    print_json(summary, args.json, sort_keys=True)
    return 0


def add_publish_arguments(publish: argparse.ArgumentParser) -> None:
    publish.add_argument("plan_dir", type=Path, metavar="PLAN_DIR", help="folder of the plan step")
    publish.add_argument(
        "--leakage",
        type=Path,
        metavar="FILE",
        help="leakage report (default: PLAN_DIR/leakage.json)",
    )
    add_roots_option(publish)


STEPS = (
    Step(
        "plan",
        "write the plan folder: support/query rows per task and the episodes",
        "Write PLAN/build_info.json, PLAN/tasks/<task>/{support,query}.jsonl, PLAN/episodes.jsonl "
        "and PLAN/rendered/ (operator images). Source images stay in their folders and are "
        "embedded at publish. Deterministic: same sources and params, same bytes. The sources "
        "default to those `benchsmith source prepare miniimagenet|clevr` put in data/sources/.",
        add_plan_arguments,
        run_plan,
    ),
    Step(
        "leakage",
        "check support/query leakage per task and write leakage.json",
        "Hash every support and query image (pixel sha256 + pHash) and report exact and near "
        "duplicates between the support and query of each task, shared classes (matching_mi "
        "must be disjoint), shared operator expressions and episodes that show the query's own "
        "expression. Leaking queries are listed as removed; publish drops them. Writes "
        "PLAN/leakage.json (or --out) and prints the summary as JSON.",
        add_leakage_arguments,
        run_leakage,
        settings=StepSettings(LeakageConfig, ("vlicl", "leakage")),
    ),
)
