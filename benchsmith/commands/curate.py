"""``benchsmith curate``: difficulty filtering, review and leakage checks on any HF-layout dataset.

The stages, their flags and their order come from the ``STAGES`` registry; their settings from
the ``curate:`` block of ``params.yaml``, then from the flags.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

from benchsmith.commands._common import COLUMN_ROLES, column_roles
from benchsmith.commands.common_flags import add_metrics_option
from benchsmith.commands.setting_flags import add_setting_flags
from benchsmith.core.metrics import write_metrics
from benchsmith.core.params import build_settings, load_params
from benchsmith.curate.config import LLMSettings
from benchsmith.family.base import StepSettings
from benchsmith.stages import STAGES


def description() -> str:
    stages = "\n".join(
        textwrap.fill(s.summary, 96, initial_indent=f"  {s.name:<17} ", subsequent_indent=" " * 20)
        for s in STAGES
    )
    return f"""\
Curate one config and split of a dataset in Hugging Face parquet layout (a benchsmith build or
any Hub dataset downloaded locally). Stages run in order, each on the samples the previous ones
kept, and each is skipped when it has nothing to work with:

{stages}

OUT_DIR gets the kept rows (source columns + difficulty, n_correct, provenance with the
decisions), decisions.parquet (one row per sample and stage: sample_id, stage, action, reason,
evidence), build_info.json and a dataset card listing every stage with its counts and every
reason code with its meaning.

Settings come from the `curate:` block of --params (default params.yaml when present), then
these flags. LLM calls go to --base-url (or OPENAI_BASE_URL) with OPENAI_API_KEY from the
environment, and are cached under --llm-cache, so a rerun repeats no answered request.
A failed call (server down, rate limit after the retries) decides nothing: the sample is
kept and counted as undecided, nothing is published (OUT_DIR keeps its previous contents)
and the command exits 1; rerun once the server is back, or pass --publish-undecided.
"""


def register(subparsers: argparse._SubParsersAction, words: list[str]) -> None:
    p = subparsers.add_parser(
        "curate",
        help="difficulty filtering, zero-pass review and leakage checks (LIME-style)",
        description=description(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("dataset", type=Path, metavar="DATASET_DIR", nargs="?")
    p.add_argument(
        "--targets",
        action="store_true",
        help="curate every entry of `curate.targets` in --params (the DVC stage does this)",
    )
    p.add_argument("--config", help="config name (required with DATASET_DIR)")
    p.add_argument("--split", default="test", help="split to curate (default: test)")
    p.add_argument(
        "--out", type=Path, metavar="OUT_DIR", help="output folder (or root with --targets)"
    )
    p.add_argument("--params", type=Path, help="params.yaml with a `curate:` block")
    p.add_argument(
        "--version",
        dest="dataset_version",
        metavar="X.Y.Z",
        help="version stamped into the card (default: params version)",
    )
    p.add_argument(
        "--max-shard-mb", type=float, metavar="MiB", help="shard size limit (default: 256)"
    )
    p.add_argument(
        "--publish-undecided",
        action="store_true",
        help="publish even when failed LLM calls left samples undecided (they are kept, and "
        "the card says so). Without it such a run exits 1 and leaves OUT_DIR as it was",
    )
    cols = p.add_argument_group("columns (guessed from common names when not given)")
    for role in COLUMN_ROLES:
        cols.add_argument(f"--{role}-column", dest=f"{role}_column", metavar="NAME")
    for stage in STAGES:
        group = p.add_argument_group(f"{stage.name} ({stage.title.lower()})")
        for flag in stage.flags:
            flag.add_to(group)
    add_metrics_option(p, "kept and dropped (per target with --targets)")
    add_setting_flags(p, StepSettings(LLMSettings, ("curate", "llm")))  # the LLM client's
    p.set_defaults(handler=run_curate)


def _params(args: argparse.Namespace) -> dict:
    params_path = args.params or (Path("params.yaml") if Path("params.yaml").is_file() else None)
    return load_params(params_path) if params_path is not None else {}


def _merge(base: dict, extra: dict) -> dict:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def run_curate(args: argparse.Namespace) -> int:
    from benchsmith.core.errors import BenchsmithError

    params = _params(args)
    section = dict(params.get("curate") or {})
    targets = section.pop("targets", None) or []
    if args.dataset_version is None:
        args.dataset_version = build_settings(params).version
    if not args.targets:
        if args.dataset is None or args.config is None or args.out is None:
            raise BenchsmithError(
                "curate needs DATASET_DIR, --config and --out (or --targets)",
                fix="see `benchsmith curate --help`",
            )
        metrics: dict = {}
        code = _curate_one(
            args, section, args.dataset, args.config, args.split, args.out, metrics, "dataset"
        )
        write_metrics(args.metrics, _table_metrics(metrics))
        return code
    out_root = args.out or Path("published/curated")
    entries = [_target(entry, args.params) for entry in targets]  # all checked before any runs
    unfinished, metrics = [], {}
    for target, entry in zip(entries, targets, strict=True):  # one undecided: the others go on
        settings = _merge(section, entry.get("settings") or {})
        out = target.out or out_root / target.name
        code = _curate_one(
            args, settings, target.dataset, target.config, target.split, out, metrics, target.name
        )
        if code:
            unfinished.append(target.name)
    if not targets:
        out_root.mkdir(parents=True, exist_ok=True)
        print("no curate.targets in params: nothing to curate")
    write_metrics(args.metrics, _table_metrics(metrics))
    if unfinished:
        print(
            f"benchsmith: curate: {len(unfinished)} of {len(targets)} target(s) not published "
            f"(see above): {', '.join(unfinished)}",
            file=sys.stderr,
        )
        return 1
    return 0


def _target(entry: object, params: Path | None):
    """One ``curate.targets`` entry as its declaration reads it; one lacking a required key is
    an error naming the entry."""
    from benchsmith.core.errors import BenchsmithError
    from benchsmith.core.settings import settings_from
    from benchsmith.curate.config import CurateTarget

    given = entry if isinstance(entry, dict) else {}
    missing = [key for key in CurateTarget.REQUIRED if given.get(key) is None]
    if missing:
        raise BenchsmithError(
            f"curate.targets entry {entry} lacks {', '.join(sorted(missing))}",
            path=params or "params.yaml",
            fix="give every target a name, dataset and config (split defaults to test)",
        )
    return settings_from(CurateTarget, given)


def _curate_one(
    args: argparse.Namespace,
    section: dict,
    dataset: Path,
    config_name: str,
    split: str,
    out: Path,
    metrics: dict,
    name: str,
) -> int:
    """Curate and publish one dataset; its counts go into ``metrics[name]`` once published."""
    from benchsmith.curate.config import config_from_params
    from benchsmith.curate.executor import run_curation
    from benchsmith.curate.publication import CuratedPublication
    from benchsmith.hf.dataset_view import DatasetView
    from benchsmith.publish.publisher import DEFAULT_MAX_SHARD_MB, publish

    config = config_from_params(section).with_flags(vars(args))
    view = DatasetView(dataset, config_name, split, column_roles(args, dataset))
    result = run_curation(view, config)
    undecided = result.undecided_counts()
    if undecided and not args.publish_undecided:
        _print_stage_counts(result)
        counts = ", ".join(f"{code} {n}" for code, n in undecided.items())
        print(
            f"benchsmith: curate {config_name}/{split}: {len(result.undecided)} sample(s) "
            f"undecided because LLM calls failed ({counts}); nothing published, {out} left as "
            "it was.\n  fix: rerun when the LLM server answers (answered calls come from the "
            "cache; only the failed ones are sent), or pass --publish-undecided",
            file=sys.stderr,
        )
        return 1
    if not result.kept():
        _print_stage_counts(result)
        worst = max(result.log.stage_counts(), key=lambda stage: stage["dropped"])
        print(
            f"benchsmith: curate {config_name}/{split}: no sample survived (0 of "
            f"{len(result.log.order)} kept; `{worst['stage']}` dropped {worst['dropped']}): an "
            f"empty dataset is not published, {out} left as it was.\n  fix: loosen or turn off "
            f"the `{worst['stage']}` stage (see `benchsmith curate --help`), or check its inputs",
            file=sys.stderr,
        )
        return 1
    publication = CuratedPublication(view, result, config)
    publish(publication, out, args.dataset_version, args.max_shard_mb or DEFAULT_MAX_SHARD_MB)
    _print_stage_counts(result)
    metrics[name] = result.metrics()
    note = f" ({len(result.undecided)} undecided, kept)" if undecided else ""
    print(f"kept {len(result.kept())} of {len(result.log.order)}{note} -> {out}")
    return 0


def _table_metrics(per_target: dict) -> dict:
    from benchsmith.curate.executor import CurationResult

    return CurationResult.table_metrics(per_target)


def _print_stage_counts(result) -> None:
    for stage in result.log.stage_counts():
        reasons = ", ".join(f"{k} {v}" for k, v in stage["reasons"].items())
        print(
            f"{stage['stage']:<18} in {stage['in']:>6}  kept {stage['kept']:>6}  "
            f"dropped {stage['dropped']:>6}  {reasons}"
        )
