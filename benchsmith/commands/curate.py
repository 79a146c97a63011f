"""``benchsmith curate``: difficulty filtering, review and leakage checks on any HF-layout dataset."""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

DESCRIPTION = """\
Curate one config and split of a dataset in Hugging Face parquet layout (a benchsmith build or
any Hub dataset downloaded locally). Stages run in order, each on the samples the previous ones
kept, and each is skipped when it has nothing to work with:

  difficulty        judge predictions (--judges) -> n_correct -> easy / middle / hard / zero_pass;
                    easy dropped (LIME). Metric and cutoff from the LIME paper's table.
  zero_pass_review  samples no judge solved: LLM YES/NO check with the image (--review-model)
                    and/or human verdicts (--human-verdicts annotations/FILE.jsonl).
  text_only         ask LLMs (--text-only-model, repeatable) the question WITHOUT the image;
                    drop when more than --max-text-only-correct of them answer it.
  blind_baselines   answer prior and option shortcuts (longest option, unique format, ...);
                    report blind accuracy vs chance; drop samples a flagged rule answers.
  image_duplicates  exact (decoded pixels) and near (perceptual hash) duplicates within a
                    sample and against --against-split splits.
  ngram_overlap     word n-gram overlap with --reference-corpus files (decontamination).
  final_draw        --target-size per subtask, stratified by difficulty, seeded.

OUT_DIR gets the kept rows (source columns + difficulty, n_correct, provenance with the
decisions), decisions.parquet (one row per sample and stage: sample_id, stage, action, reason,
evidence), build_info.json and a dataset card listing every stage with its counts.

Settings come from the `curate:` block of --params (default params.yaml when present), then
these flags. LLM calls go to --base-url (or OPENAI_BASE_URL) with OPENAI_API_KEY from the
environment, and are cached under --llm-cache, so a rerun repeats no answered request.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "curate",
        help="difficulty filtering, zero-pass review and leakage checks (LIME-style)",
        description=DESCRIPTION,
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
    p.add_argument("--version", default="0.1.0", help="version stamped into the card")
    cols = p.add_argument_group("columns (guessed from common names when not given)")
    for role in ("id", "question", "answer", "choices", "image", "subtask"):
        cols.add_argument(f"--{role}-column", dest=f"{role}_column", metavar="NAME")
    j = p.add_argument_group("difficulty")
    j.add_argument("--judges", nargs="+", type=Path, metavar="FILE", help="judge predictions JSONL")
    j.add_argument("--metric", help="accuracy | vqa_accuracy | anls | relaxed_accuracy")
    j.add_argument("--cutoff", type=float, help="override the metric's correctness cutoff")
    j.add_argument("--bins", choices=["paper", "code"], help="bin edges preset")
    j.add_argument("--missing-policy", choices=["error", "treat_wrong", "exclude_model"])
    r = p.add_argument_group("review and text-only (LLM)")
    r.add_argument("--review-model", help="model for the zero-pass YES/NO check")
    r.add_argument("--review-detail", choices=["low", "high", "auto"])
    r.add_argument("--human-verdicts", type=Path, metavar="FILE")
    r.add_argument("--text-only-model", nargs="+", dest="text_only_models", metavar="NAME")
    r.add_argument("--max-text-only-correct", type=int)
    r.add_argument("--base-url", help="OpenAI-compatible endpoint (default: OPENAI_BASE_URL)")
    r.add_argument("--llm-cache", type=Path, help="response cache folder")
    r.add_argument("--concurrency", type=int, help="parallel LLM requests")
    lk = p.add_argument_group("leakage")
    lk.add_argument("--no-blind", action="store_true", help="skip blind baselines")
    lk.add_argument("--blind-threshold", type=float)
    lk.add_argument("--no-image-check", action="store_true", help="skip duplicate-image checks")
    lk.add_argument("--against-split", nargs="+", metavar="SPLIT", help="reference split(s)")
    lk.add_argument("--near-threshold", type=int, help="phash Hamming distance for near dups")
    lk.add_argument("--reference-corpus", nargs="+", type=Path, metavar="FILE")
    lk.add_argument("--ngram", type=int, help="n of the word n-grams (default 8)")
    d = p.add_argument_group("final draw")
    d.add_argument("--target-size", type=int, help="samples per subtask (default: keep all)")
    d.add_argument("--seed", type=int)
    p.add_argument("--max-shard-mb", type=int, default=256)
    p.set_defaults(handler=run_curate)


def _params_section(args: argparse.Namespace) -> dict:
    from benchsmith.core.params import load_params

    params_path = args.params or (Path("params.yaml") if Path("params.yaml").is_file() else None)
    if params_path is None:
        return {}
    return dict(load_params(params_path).get("curate") or {})


def _merge(base: dict, extra: dict) -> dict:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _settings(args: argparse.Namespace, section: dict):
    from benchsmith.builders.curate.config import config_from_params

    config = config_from_params(section)

    def override(obj, **values):
        given = {k: v for k, v in values.items() if v is not None}
        return replace(obj, **given) if given else obj

    judges = override(
        config.judges,
        files=tuple(args.judges) if args.judges else None,
        metric=args.metric,
        cutoff=args.cutoff,
        bins=args.bins,
        missing_policy=args.missing_policy,
    )
    review = override(
        config.review,
        model=args.review_model,
        detail=args.review_detail,
        human_verdicts=args.human_verdicts,
    )
    text_only = override(
        config.text_only,
        models=tuple(args.text_only_models) if args.text_only_models else None,
        max_text_only_correct=args.max_text_only_correct,
    )
    blind = override(
        config.blind, enabled=False if args.no_blind else None, threshold=args.blind_threshold
    )
    images = override(
        config.images,
        enabled=False if args.no_image_check else None,
        against_splits=tuple(args.against_split) if args.against_split else None,
        near_threshold=args.near_threshold,
    )
    ngram = override(
        config.ngram,
        corpus=tuple(args.reference_corpus) if args.reference_corpus else None,
        n=args.ngram,
    )
    llm = override(
        config.llm, base_url=args.base_url, cache_dir=args.llm_cache, concurrency=args.concurrency
    )
    return override(
        replace(
            config,
            judges=judges,
            review=review,
            text_only=text_only,
            blind=blind,
            images=images,
            ngram=ngram,
            llm=llm,
        ),
        target_size=args.target_size,
        seed=args.seed,
    )


def run_curate(args: argparse.Namespace) -> int:
    from benchsmith.core.errors import BenchsmithError

    section = _params_section(args)
    targets = section.pop("targets", None) or []
    if not args.targets:
        if args.dataset is None or args.config is None or args.out is None:
            raise BenchsmithError(
                "curate needs DATASET_DIR, --config and --out (or --targets)",
                fix="see `benchsmith curate --help`",
            )
        return _curate_one(args, section, args.dataset, args.config, args.split, args.out)
    out_root = args.out or Path("published/curated")
    for target in targets:  # every entry is checked before any (maybe long) run starts
        missing = {"name", "dataset", "config"} - set(target if isinstance(target, dict) else ())
        if missing:
            raise BenchsmithError(
                f"curate.targets entry {target} lacks {', '.join(sorted(missing))}",
                path=args.params or "params.yaml",
                fix="give every target a name, dataset and config (split defaults to test)",
            )
    for target in targets:
        settings = _merge(section, target.get("settings") or {})
        out = Path(target.get("out") or out_root / target["name"])
        _curate_one(
            args,
            settings,
            Path(target["dataset"]),
            target["config"],
            target.get("split", "test"),
            out,
        )
    if not targets:
        out_root.mkdir(parents=True, exist_ok=True)
        print("no curate.targets in params: nothing to curate")
    return 0


def _curate_one(
    args: argparse.Namespace, section: dict, dataset: Path, config_name: str, split: str, out: Path
) -> int:
    from benchsmith.builders.curate.pipeline import run_curation
    from benchsmith.publish.curated import publish_curated
    from benchsmith.sources.hf_dataset import ColumnMap, DatasetView, family_columns, merge_columns

    config = _settings(args, section)
    given = ColumnMap(
        id=args.id_column,
        question=args.question_column,
        answer=args.answer_column,
        choices=args.choices_column,
        image=args.image_column,
        subtask=args.subtask_column,
    )
    columns = merge_columns(family_columns(dataset), given)
    view = DatasetView(dataset, config_name, split, columns)
    result = run_curation(view, config)
    publish_curated(
        view, result, config, out, args.version, max_shard_bytes=args.max_shard_mb << 20
    )
    for stage in result.log.stage_counts():
        reasons = ", ".join(f"{k} {v}" for k, v in stage["reasons"].items())
        print(
            f"{stage['stage']:<18} in {stage['in']:>6}  kept {stage['kept']:>6}  "
            f"dropped {stage['dropped']:>6}  {reasons}"
        )
    print(f"kept {len(result.kept())} of {len(result.log.order)} -> {out}")
    return 0
