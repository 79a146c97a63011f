"""``benchsmith vlicl``: sample sources, build, leakage check, publish (and audit) VL-ICL.

Every option defaults to the ``vlicl:`` section of ``params.yaml`` (``--params``) for the
active ``profile``; a flag given on the command line wins for that run. The DVC pipeline
(``dvc.yaml``) calls these same commands.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from benchsmith.commands._common import add_dataset_version_option, add_params_option
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.params import load_params, profile_of, section
from benchsmith.core.progress import log

DEFAULT_BUILD = Path("data/vlicl/build")
DEFAULT_SAMPLE_SOURCES = Path("data/sources/vlicl")
DEFAULT_OUT = Path("published/vlicl")
ROOT_NAMES = ("miniimagenet", "clevr", "ingest", "font")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "vlicl",
        help="build VL-ICL Bench (few-shot episodes): sample, build, leakage, publish",
        description=(
            "Build VL-ICL Bench from MiniImageNet (Ravi split), CLEVR v1.0 and rendered operator "
            "images: sample -> build -> leakage -> publish."
        ),
    )
    commands = parser.add_subparsers(dest="vlicl_command", metavar="STEP", required=True)

    sample = commands.add_parser(
        "sample",
        help="write miniature MiniImageNet and CLEVR sources in their real layouts",
        description=(
            "Write OUT/miniimagenet ({train,val,test}.csv + images/, Ravi layout) and "
            "OUT/clevr/CLEVR_v1.0 (scenes JSON + PNGs), small enough to build offline in seconds. "
            "Same seed, same bytes."
        ),
    )
    sample.add_argument("out", type=Path, metavar="OUT", help="folder to write (replaced)")
    sample.add_argument("--seed", type=int, default=0, metavar="S", help="seed (default: 0)")
    sample.set_defaults(handler=run_sample)

    build = commands.add_parser(
        "build",
        help="write the build folder: support/query rows per task and the episodes",
        description=(
            "Write BUILD/build_info.json, BUILD/tasks/<task>/{support,query}.jsonl, "
            "BUILD/episodes.jsonl and BUILD/rendered/ (operator images). Source images stay in "
            "their folders and are embedded at publish. Deterministic: same sources and params, "
            "same bytes. In the sample profile the sources default to those of `vlicl sample "
            f"{DEFAULT_SAMPLE_SOURCES}`."
        ),
    )
    build.add_argument(
        "--mode",
        choices=("rebuild", "ingest"),
        help="rebuild: our construction from the raw sources (default); ingest: read the "
        "official VL-ICL release (faithful, versioned separately)",
    )
    build.add_argument(
        "--ingest-dir",
        type=Path,
        metavar="DIR",
        help="VL-ICL release folder holding <task>/query.json (ingest mode)",
    )
    build.add_argument(
        "--miniimagenet",
        type=Path,
        metavar="DIR",
        help="MiniImageNet root with {train,val,test}.csv and images/",
    )
    build.add_argument("--clevr", type=Path, metavar="DIR", help="the CLEVR_v1.0 folder")
    build.add_argument(
        "--font",
        type=Path,
        metavar="TTF",
        help="font for the operator images (default: Pillow's embedded font; its sha256 is recorded)",
    )
    build.add_argument("--tasks", nargs="+", metavar="TASK", help="tasks to build (default: all)")
    build.add_argument(
        "--seed",
        type=int,
        metavar="S",
        help="build seed (default: vlicl.seed, else the params seed)",
    )
    add_params_option(build)
    build.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_BUILD,
        metavar="DIR",
        help=f"build folder (replaced atomically; default {DEFAULT_BUILD})",
    )
    build.set_defaults(handler=run_build)

    leakage = commands.add_parser(
        "leakage",
        help="check support/query leakage per task and write leakage.json",
        description=(
            "Hash every support and query image (pixel sha256 + pHash) and report exact and near "
            "duplicates between the support and query of each task, shared classes (matching_mi "
            "must be disjoint), shared operator expressions and episodes that show the query's "
            "own expression. Leaking queries are listed as removed; publish drops them. Writes "
            "BUILD/leakage.json (or --out) and prints the summary as JSON."
        ),
    )
    leakage.add_argument(
        "build_dir", type=Path, metavar="BUILD_DIR", help="folder of `vlicl build`"
    )
    leakage.add_argument(
        "--threshold",
        type=int,
        metavar="BITS",
        help="near-duplicate pHash Hamming distance, 0-64 (default: vlicl.leakage.image_threshold, 4)",
    )
    leakage.add_argument("--workers", type=int, metavar="N", help="hashing processes (default: 1)")
    leakage.add_argument(
        "--out", type=Path, metavar="FILE", help="report path (default: BUILD_DIR/leakage.json)"
    )
    _add_roots(leakage)
    add_params_option(leakage)
    leakage.set_defaults(handler=run_leakage)

    publish = commands.add_parser(
        "publish",
        help="write the Hugging Face dataset folder (card, build_info.json, parquet shards)",
        description=(
            "Write a versioned Hugging Face dataset folder: one config per task with splits "
            "support and query (images embedded, checked against their recorded sha256), the "
            "episodes config (splits hashed and legacy), README.md and build_info.json. Queries "
            "the leakage report removes are dropped. Loads offline with "
            "datasets.load_dataset(DIR, TASK, split='query')."
        ),
    )
    publish.add_argument(
        "build_dir", type=Path, metavar="BUILD_DIR", help="folder of `vlicl build`"
    )
    publish.add_argument(
        "--leakage",
        type=Path,
        metavar="FILE",
        help="leakage report (default: BUILD_DIR/leakage.json)",
    )
    add_dataset_version_option(publish)
    publish.add_argument(
        "--max-shard-mb",
        type=float,
        metavar="MB",
        help="shard size limit in MB of arrow data (default: vlicl.publish.max_shard_mb, 256)",
    )
    _add_roots(publish)
    add_params_option(publish)
    publish.add_argument(
        "--out",
        type=Path,
        metavar="DIR",
        help=f"dataset folder (default: vlicl.publish.out, {DEFAULT_OUT})",
    )
    publish.set_defaults(handler=run_publish)

    audit = commands.add_parser(
        "audit",
        help="verify a published VL-ICL folder against its sources",
        description=(
            "Check every row (or --config / --id): source files match their sha256, embedded "
            "images equal their source files, operator images re-render byte-identically with "
            "the recorded font, CLEVR answers recount from the scenes JSON, episodes name "
            "published rows. Exit 0 when all holds, 1 naming the file that differs, 2 on bad "
            "arguments."
        ),
    )
    audit.add_argument("dataset", type=Path, metavar="DATASET_DIR", help="e.g. published/vlicl")
    audit.add_argument("--config", nargs="+", metavar="TASK", help="only these task configs")
    audit.add_argument(
        "--id",
        nargs="+",
        dest="row_ids",
        metavar="ID",
        help="only these rows, e.g. clevr/query/00003",
    )
    _add_roots(audit)
    audit.set_defaults(handler=run_audit)


def _add_roots(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        action="append",
        default=[],
        metavar="NAME=DIR",
        help=f"a source folder that moved since the build; NAME is one of {', '.join(ROOT_NAMES)}",
    )


def parse_roots(values: list[str]) -> dict[str, str]:
    out = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or name not in ROOT_NAMES or not path:
            raise BenchsmithError(
                f"--root {value!r} is not NAME=DIR",
                fix=f"use e.g. --root clevr=/data/CLEVR_v1.0 (NAME: {', '.join(ROOT_NAMES)})",
            )
        out[name] = path
    return out


def _vlicl_params(path: Path | None) -> tuple[dict[str, Any], dict[str, Any], str]:
    params = load_params(path)
    return params, section(params, "vlicl"), profile_of(params)


def run_sample(args: argparse.Namespace) -> int:
    from benchsmith.sources.vlicl_sample import write_vlicl_sample_sources

    paths = write_vlicl_sample_sources(args.out, seed=args.seed)
    log("vlicl sample: " + ", ".join(f"{k} -> {v}" for k, v in sorted(paths.items())))
    return 0


def source_folders(settings: dict[str, Any], profile: str, args: argparse.Namespace) -> dict:
    """Source folders: flags, then ``vlicl.sources.<profile>``, then the sample layout."""
    from benchsmith.sources.vlicl_sample import CLEVR_PARENT_DIRNAME, MINIIMAGENET_DIRNAME

    configured = section(settings, "sources", profile)
    sample_root = Path(configured.get("root") or DEFAULT_SAMPLE_SOURCES)
    defaults = {
        "miniimagenet": sample_root / MINIIMAGENET_DIRNAME if profile == "sample" else None,
        "clevr": sample_root / CLEVR_PARENT_DIRNAME / "CLEVR_v1.0" if profile == "sample" else None,
    }
    out = {}
    for name, flag in (
        ("miniimagenet", args.miniimagenet),
        ("clevr", args.clevr),
        ("font", args.font),
        ("ingest", args.ingest_dir),
    ):
        value = flag or configured.get(name if name != "ingest" else "ingest_dir")
        value = value or defaults.get(name)
        out[name] = Path(value) if value else None
    return out


def run_build(args: argparse.Namespace) -> int:
    from benchsmith.builders.vlicl.config import VliclConfig
    from benchsmith.builders.vlicl.plan import VliclSources, build_vlicl

    params, settings, profile = _vlicl_params(args.params)
    seed = args.seed if args.seed is not None else settings.get("seed", params.get("seed"))
    config = VliclConfig.from_params(settings, profile, mode=args.mode, seed=seed, tasks=args.tasks)
    summary = build_vlicl(config, VliclSources(**source_folders(settings, profile, args)), args.out)
    json.dump(
        {"mode": summary.mode, "counts": summary.counts, "episodes": summary.episodes},
        sys.stdout,
        indent=2,
    )
    print()
    return 0


def run_leakage(args: argparse.Namespace) -> int:
    from benchsmith.builders.vlicl.leakage import DEFAULT_IMAGE_THRESHOLD, check_vlicl_leakage

    _, settings, _ = _vlicl_params(args.params)
    knobs = section(settings, "leakage")
    threshold = args.threshold
    if threshold is None:
        threshold = int(knobs.get("image_threshold", DEFAULT_IMAGE_THRESHOLD))
    report = check_vlicl_leakage(
        args.build_dir,
        threshold,
        out_path=args.out,
        workers=args.workers or int(knobs.get("workers", 1)),
        roots_override=parse_roots(args.root),
    )
    summary = report["summary"]
    log(
        f"vlicl leakage: {summary['removed_queries']} leaking queries to remove, "
        f"{summary['exact_pairs']} exact / {summary['near_pairs']} near duplicate pairs "
        f"-> {args.out or args.build_dir / 'leakage.json'}"
    )
    json.dump(summary, sys.stdout, indent=2, sort_keys=True)
    print()
    return 0


def run_publish(args: argparse.Namespace) -> int:
    from benchsmith.publish.vlicl import DEFAULT_MAX_SHARD_MB, publish_vlicl

    params, settings, _ = _vlicl_params(args.params)
    knobs = section(settings, "publish")
    out = args.out or Path(knobs.get("out", DEFAULT_OUT))
    version = args.dataset_version or str(params.get("version", "0.0.0"))
    max_mb = args.max_shard_mb or float(knobs.get("max_shard_mb", DEFAULT_MAX_SHARD_MB))
    publish_vlicl(
        args.build_dir,
        out,
        version,
        max_mb,
        leakage_path=args.leakage,
        roots_override=parse_roots(args.root),
    )
    return 0


def run_audit(args: argparse.Namespace) -> int:
    from benchsmith.publish.vlicl_audit import audit_vlicl

    report = audit_vlicl(
        args.dataset, parse_roots(args.root), configs=args.config, ids=args.row_ids
    )
    print(report.render())
    return 0 if report.ok else 1
