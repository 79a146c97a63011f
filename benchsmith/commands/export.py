"""``benchsmith export lmms-eval|vlmevalkit``: hand a published benchmark to the harnesses people
use, through the family interface (``Family.prediction_requests`` for lmms-eval, whose tasks send
what ``predict`` sends; ``Family.harness_rows`` for VLMEvalKit's single-turn TSV)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

DESCRIPTION = """\
Write a published benchsmith folder in a harness's own format.

  lmms-eval   a task folder per config under --out DIR (<config>/benchsmith_FAMILY_CONFIG.yaml
              and utils.py) and a group benchsmith_FAMILY.yaml: the task reads the published
              parquet (dataset_path: parquet, absolute data_files), sends the requests
              `benchsmith predict` sends (doc_to_messages for chat models; doc_to_visual +
              doc_to_text, with <image> marking interleaved images, for the others) and scores
              with the family scorer (the metric is `benchsmith score`'s headline). Run it with
                lmms-eval --include_path DIR --tasks benchsmith_FAMILY ...
              benchsmith must be installed in lmms-eval's environment; export again if the
              published folder moves. VL-ICL: --shots, --seeds, --sampler as in predict.
  vlmevalkit  one TSV as VLMEvalKit reads a custom dataset: index, image (base64; a list of
              base64 strings for several images), question, option columns A..., answer,
              category, l2-category, plus id (the published sample id). MMIU: every task, as
              multiple choice; MULTI: SA (multiple choice) and FB (short answer), the rest
              counted and left out; MMNeedle: short answer; VL-ICL: the query split
              zero-shot, with the task's instruction as predict sends it, short answer.
              Rows without an image go beside it (VLMEvalKit drops them from an image TSV):
              NAME_text.tsv (multiple choice, read as a text MCQ dataset) and
              NAME_text_open.tsv (short answer, image_path [] so the question goes alone).

MMIU's ScanNet images are published as references (ScanNet's terms): --scannet DIR renders each
from your ScanNet copy as the export goes (vlmevalkit: into the TSV; lmms-eval: when the task
runs, so the task names your copy's path), its sha256 checked; without it those configs are left
out of a whole-folder export (counted) and refused by name.

Every image is the published image's bytes, base64-encoded (decode one to get the file back).
"""


def register(subparsers: argparse._SubParsersAction, words: list[str]) -> None:
    parser = subparsers.add_parser(
        "export",
        help="export a published dataset for an evaluation harness (lmms-eval tasks, "
        "VLMEvalKit TSV)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("harness", choices=("lmms-eval", "vlmevalkit"), help="the target harness")
    parser.add_argument("dataset", type=Path, metavar="DATASET_DIR", help="a published folder")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR|FILE.tsv",
                        help="lmms-eval: the folder of task folders (its files are replaced, "
                        "nothing else there is touched); vlmevalkit: the TSV to write (replaced "
                        "atomically)")  # fmt: skip
    parser.add_argument("--config", action="append", metavar="CONFIG",
                        help="configs to export (repeatable; default: every config of samples "
                        "except those that repeat another's, such as MULTI's elite and MMIU's "
                        "circular)")  # fmt: skip
    from benchsmith.commands._common import add_episode_arguments

    add_episode_arguments(parser, "VL-ICL episodes (lmms-eval)")
    scannet = parser.add_argument_group("ScanNet images published as references (MMIU)")
    scannet.add_argument("--scannet", type=Path, metavar="DIR",
                         help="your ScanNet v2 copy (holding scans/): render each referenced "
                         "image as the build did, checked by its sha256")  # fmt: skip
    from benchsmith.commands._common import add_root_option

    add_root_option(parser)
    parser.set_defaults(handler=run_export)


def split_of(info: dict, config: str) -> str:
    """The split a harness evaluates: ``query`` (VL-ICL), else ``test``, else the only one."""
    splits = list((info.get("configs") or {}).get(config) or {})
    for name in ("query", "test"):
        if name in splits:
            return name
    return splits[0] if splits else "test"


def run_export(args: argparse.Namespace) -> int:
    from benchsmith.commands._common import (
        dataset_kind,
        evaluated_as,
        parse_roots,
        refuse_unused_episode_flags,
        require_sample_config,  # fmt: skip
        sample_configs,
    )
    from benchsmith.core.errors import BenchsmithError
    from benchsmith.core.progress import log
    from benchsmith.family.base import Family

    kind, info = dataset_kind(args.dataset)
    family = evaluated_as(kind, info, args.dataset)
    if not isinstance(family, Family):
        raise BenchsmithError("only a folder of a benchmark family (or a curated subset of one) "
                              "can be exported", path=args.dataset,
                              fix="export the source benchmark's folder")  # fmt: skip
    uses = family.predict_options if args.harness == "lmms-eval" else ()
    refuse_unused_episode_flags(args, uses, " in an lmms-eval export")
    if args.scannet is not None and "scannet" not in family.predict_options:
        raise BenchsmithError("--scannet applies to MMIU's ScanNet images, not to this dataset",
                              path=args.dataset, fix="drop --scannet")  # fmt: skip
    if args.scannet is not None and not (args.scannet / "scans").is_dir():
        raise BenchsmithError("--scannet is not a ScanNet v2 copy (no scans/ folder in it)",
                              path=args.scannet,
                              fix="pass the folder holding scans/<scene>/<scene>.sens")  # fmt: skip
    from benchsmith.family.requests import PredictOptions

    options = PredictOptions(scannet=args.scannet.resolve() if args.scannet else None)
    configs = args.config or [c for c in sample_configs(kind, info, args.dataset)
                              if c not in family.repeated_configs]  # fmt: skip
    for config in configs:
        require_sample_config(args.dataset, kind, info, config)
    unsendable = {c: why for c in configs if (why := family.unsendable(info, c, options))}
    if args.config and unsendable:
        config, why = next(iter(unsendable.items()))
        raise BenchsmithError(f"config {config!r} cannot be exported: {why.split(';')[0]}",
                              path=args.dataset, fix=why.split("; ", 1)[-1])  # fmt: skip
    if unsendable:
        log(
            f"export: left out {len(unsendable)} config(s) ({', '.join(unsendable)}): "
            f"{next(iter(unsendable.values()))}"
        )
        configs = [c for c in configs if c not in unsendable]
    if not configs:
        raise BenchsmithError("no config of this folder can be exported as published",
                              path=args.dataset, fix="see the message above")  # fmt: skip
    if args.harness == "lmms-eval":
        return export_lmms_eval(args, family, info, configs, options)
    return export_vlmevalkit(args, family, info, configs, parse_roots(args.root, kind), options)


def export_lmms_eval(args: argparse.Namespace, kind, info: dict, configs: list[str],
                     options) -> int:  # fmt: skip
    from benchsmith.core.errors import BenchsmithError
    from benchsmith.core.progress import log
    from benchsmith.exports.lmms_eval import TaskSpec, write_tasks
    from benchsmith.hf.reader import split_files
    from benchsmith.scoring import SCORERS

    if args.out.suffix in (".tsv", ".yaml", ".yml") or args.out.is_file():
        raise BenchsmithError("an lmms-eval export is a folder of task folders", path=args.out,
                              fix="give --out a folder, e.g. --out lmms_tasks/")  # fmt: skip
    headline = SCORERS.get(kind.name).headline
    label = kind.name  # tasks benchsmith_<family>_<config>; a curated folder's by its name
    from benchsmith.curate.kind import CURATED

    if CURATED.holds(info):
        label = "curated_" + re.sub(r"[^A-Za-z0-9_]+", "_", Path(args.dataset).resolve().name)
    specs = []
    for config in configs:
        split = split_of(info, config)
        specs.append(TaskSpec(kind.name, config, split,
                              tuple(p.resolve() for p in split_files(args.dataset, config, split)),
                              headline, str(info.get("version") or ""), tuple(args.shots or ()),
                              tuple(args.seeds or ()), args.sampler, label,
                              str(options.scannet) if options.scannet else None))  # fmt: skip
    summary = write_tasks(specs, args.dataset, args.out, label)
    log(f"export lmms-eval: {len(summary.tasks)} task(s) and group {summary.group} -> {args.out}; "
        f"run: lmms-eval --include_path {args.out} --tasks {summary.group} --model ...")  # fmt: skip
    return 0


def export_vlmevalkit(args: argparse.Namespace, kind, info: dict, configs: list[str],
                      roots: dict[str, str] | None = None, options=None) -> int:  # fmt: skip
    from benchsmith.core.progress import log
    from benchsmith.curate.kind import CURATED
    from benchsmith.exports.vlmevalkit import tsv_paths, write_tsv
    from benchsmith.family.requests import PredictOptions, RequestSource

    def rows():
        for config in configs:
            split = split_of(info, config)
            if CURATED.holds(info):  # the source family's rows, kept ones
                from benchsmith.curate.evaluate import curated_harness_rows

                yield from ((config, row) for row in curated_harness_rows(
                    args.dataset, info, config, split, kind, roots, options))  # fmt: skip
                continue
            source = RequestSource(args.dataset, info, config, split, options or PredictOptions())
            for row in kind.harness_rows(source):
                yield config, row

    from benchsmith.core.outputs import (
        check_file_replaceable,
        forget_file,
        mark_file,
        output_lock,
    )

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    paths = tsv_paths(out)
    with output_lock(out):  # a second export to the same file refuses
        for path in paths.values():  # any may be written: each must be ours to replace
            check_file_replaceable(path, inputs=[args.dataset])
        summary = write_tsv(rows, out)
        for form, path in paths.items():
            if form in summary.files:
                mark_file(path)
            elif path.exists():  # an earlier export's text rows, ours and unchanged (checked)
                forget_file(path)
    total = sum(int((info.get("configs") or {}).get(c, {}).get(split_of(info, c), {})
                    .get("num_examples", 0)) for c in configs)  # fmt: skip
    left = total - summary.rows
    log(f"export vlmevalkit: {summary.rows} rows ({summary.multiple_choice} multiple choice, "
        f"{summary.short_answer} short answer) from {len(configs)} config(s) -> {args.out}"
        + (f"; {left} sample(s) have no single-turn form and were left out" if left > 0 else ""))  # fmt: skip
    if len(summary.files) > 1:
        names = {"image": "with images", "text": "text-only multiple choice",
                 "text_open": "text-only short answer"}  # fmt: skip
        log("export vlmevalkit: " + "; ".join(
            f"{summary.rows_by_form.get(f, 0)} {names[f]} -> {p}" for f, p in summary.files.items()
        ) + "; VLMEvalKit drops rows without an image from an image TSV, so give every file: "
            + "--data " + " ".join(p.stem for p in summary.files.values()))  # fmt: skip
    return 0
