"""``benchsmith predict``: run a model over one config/split of a dataset, resumably.

The predictions feed the judge (difficulty) and text-only leakage stages and ``benchsmith
score``, so the prompt is the shared lmms-eval one (:mod:`benchsmith.options.question_prompt`).
A run must survive flaky servers and interruptions without repeating paid requests: answers go
to the LLM cache as they arrive and to the output file one flushed line at a time; failed
requests are not written, so the next run retries exactly those.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import IO, Any

DESCRIPTION = """\
Run a model (any OpenAI-compatible chat-completions server) over one config and split of a
dataset in Hugging Face parquet layout, and write one JSON line per sample to --out:

  {"sample_id": "17", "model": "MODEL", "response": "B", "cache_key": "<sha256>"}

On a folder benchsmith published, each family builds its own prompt and writes the id fields its
scorer reads, so `predict` then `score` works for every family:
  mmneedle  haystack images in order + the original prompt           -> sample_id
  vlicl     instruction, then each demonstration's images, question and answer, then the
            query (one request per query, --shots and --seeds, episodes --sampler)
                                                                   -> query_id, n_shot, seed
  mmiu      images + context/question in the original order + "Please answer the option
            directly like A,B,C,D..."                                -> id
  multi     images + the question text + a Chinese answer-format line per type, with a system
            prompt naming the knowledge point                      -> question_id
A curated folder (`benchsmith curate`) is sent as the family its rows came from: the same
prompts, demonstrations, shots, seeds and ids as the family's own folder, for the kept rows only
(read from the source folder its build_info records; --root source=DIR when it moved).
Any other folder: the question, then "A. option" lines for multiple choice and the lmms-eval
instruction ("Answer with the option's letter from the given choices directly." or "Answer the
question using a single word or phrase."), after the sample's image(s); the --*-column flags
choose the columns (and take this generic prompt on a benchsmith folder too).
--instruction replaces the instruction line ("" for none). --text-only sends no image at all
(for text-only leakage runs).

Text-to-image configs (VL-ICL open_t2i_mi, cobsat, fast_count_t2i, fast_attr_t2i) ask for an
image: each demonstration's prompt and image, then the query's prompt. --image-api chat
(default) sends them to chat completions with "modalities": ["image", "text"] and reads the
image from the reply (message.images or an image_url part: OpenRouter, LiteLLM, Gemini's
OpenAI layer); --image-api images sends the text prompt to /images/generations (zero-shot
only: that endpoint takes no input images). Each image is decoded, then stored once by content
next to --out, in FILE-images/<sha256>.<ext>, and its row reads
  {"query_id": ..., "n_shot": 0, "seed": 0, "model": "M", "response": "FILE-images/<sha256>.png",
   "image_sha256": "<sha256>", "cache_key": "<sha256>"}
`benchsmith score --judge-model` then asks a vision model whether each image shows what the
query's answer names.

Server: --base-url or $OPENAI_BASE_URL; the API key is read from $OPENAI_API_KEY (or the variable
named by --api-key-env) and is never written anywhere. Local servers need no key.

Resumable: sample ids already in --out are skipped, and answers are cached on disk by request
content (--llm-cache), so rerunning after an interruption or after failures sends only the
requests that have no answer yet. A truncated last line (killed mid-write) is dropped and
counted. Failed requests (server errors, timeouts, junk after retries) are not written; the
summary counts them and the exit code is 1 until a rerun completes them. If every request of
the first batch fails, the run stops with the first error (server down or wrong model).
"""


OUTPUT_FIELDS = ("model", "response", "image_sha256", "cache_key")  # the rest: the request's key


@dataclass
class ExistingOutput:
    """What a previous run left in the output file."""

    done: set[str] = field(default_factory=set)
    truncated_lines: int = 0


@dataclass
class PredictSummary:
    written: int = 0
    from_cache: int = 0
    already_done: int = 0
    failed: int = 0
    first_error: str | None = None


def register(subparsers: argparse._SubParsersAction, words: list[str]) -> None:
    parser = subparsers.add_parser(
        "predict",
        help="run a model over a dataset split and write predictions JSONL (resumable)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "dataset", type=Path, metavar="DATASET_DIR", help="folder holding data/<config>/*.parquet"
    )
    parser.add_argument("--config", required=True, metavar="CONFIG", help="config name")
    parser.add_argument("--split", metavar="SPLIT",
                        help="split name (default: the config's only split; VL-ICL: query)")  # fmt: skip
    parser.add_argument("--model", required=True, metavar="MODEL", help="model name on the server")
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="FILE.jsonl",
        help="predictions JSONL to write, or to resume",
    )
    server = parser.add_argument_group("server")
    server.add_argument("--base-url", metavar="URL", help="e.g. http://127.0.0.1:8000/v1")
    server.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the API key (default OPENAI_API_KEY)",
    )
    server.add_argument("--concurrency", type=int, default=4, metavar="N", help="default 4")
    server.add_argument("--max-retries", type=int, default=5, metavar="N", help="default 5")
    server.add_argument("--timeout", type=float, default=60.0, metavar="SEC", help="default 60")
    server.add_argument(
        "--llm-cache",
        dest="cache_dir",
        type=Path,
        default=Path(".benchsmith/llm-cache"),
        metavar="DIR",
        help="LLM response cache (default .benchsmith/llm-cache)",
    )
    prompt = parser.add_argument_group("prompt")
    prompt.add_argument("--text-only", action="store_true", help="send no image")
    prompt.add_argument(
        "--detail",
        choices=("low", "high", "auto"),
        default="auto",
        help="image detail requested from the server (default auto)",
    )
    prompt.add_argument("--max-tokens", type=int, metavar="N", help="server default if unset")
    prompt.add_argument("--instruction", metavar="TEXT", help="replaces the instruction line")
    prompt.add_argument("--limit", type=int, metavar="N", help="only the first N requests")
    prompt.add_argument(
        "--image-api", choices=("chat", "images"), default=None,
        help="text-to-image configs: chat completions answering with an image (default; "
        "in-context requests) or /images/generations (a text prompt only: zero-shot)",
    )  # fmt: skip
    from benchsmith.commands._common import add_episode_arguments

    add_episode_arguments(parser, "VL-ICL episodes")
    scannet = parser.add_argument_group("ScanNet images published as references (MMIU)")
    scannet.add_argument("--scannet", type=Path, metavar="DIR",
                         help="your ScanNet v2 copy (holding scans/): render each referenced "
                         "image as the build did, checked by its sha256")  # fmt: skip
    scannet.add_argument("--skip-references", action="store_true",
                         help="leave out the items whose images are references (counted)")  # fmt: skip
    from benchsmith.commands._common import add_root_option

    add_root_option(parser)
    columns = parser.add_argument_group("columns (guessed from common names if not given)")
    for role in ("id", "question", "choices", "image"):
        columns.add_argument(f"--{role}-column", metavar="NAME", help=f"the {role} column")
    parser.set_defaults(handler=run_predict)


def read_existing(path: Path, model: str) -> ExistingOutput:
    """Ids already predicted; a torn last line is cut off the file so appends stay valid."""
    from benchsmith.core.errors import BenchsmithError
    from benchsmith.core.json_files import scan_appendable_jsonl

    fix = "delete the broken line (or the file) and rerun; the LLM cache keeps answers"
    scan = scan_appendable_jsonl(path, fix=fix)
    existing = ExistingOutput(truncated_lines=int(scan.torn_tail))
    for number, row in scan.rows:
        key = {k: v for k, v in row.items() if k not in OUTPUT_FIELDS} if isinstance(
            row, dict) else {}  # fmt: skip
        if not key:
            raise BenchsmithError(
                f"line {number} is not a prediction row (not an object with its id fields)",
                path=f"{path}:{number}",
                fix=fix,
            )
        if row.get("model") != model:
            raise BenchsmithError(
                f"the file holds predictions of model {row.get('model')!r}, not {model!r}",
                path=f"{path}:{number}",
                fix="write each model's predictions to its own --out file",
            )
        existing.done.add(json.dumps(key, sort_keys=True, ensure_ascii=False))
    if scan.torn_tail:
        os.truncate(path, scan.complete_bytes)
    elif scan.missing_newline:
        with open(path, "ab") as handle:  # a complete last row without its newline
            handle.write(b"\n")
    return existing


class LazyAppend:
    """An append-mode text file opened at its first write, so a run that writes nothing (the
    server is down, every request failed) leaves no empty output file behind."""

    def __init__(self, path: Path):
        self.path = path
        self._handle: IO[str] | None = None

    def write(self, text: str) -> int:
        if self._handle is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - closed below
        return self._handle.write(text)

    def flush(self) -> None:
        if self._handle is not None:
            self._handle.flush()

    def __enter__(self) -> LazyAppend:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._handle is not None:
            self._handle.close()


def _chunks(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    iterator = iter(items)
    while chunk := list(islice(iterator, size)):
        yield chunk


def _write_results(
    handle: LazyAppend, requests, results, model: str, summary: PredictSummary
) -> None:
    for request, result in zip(requests, results, strict=True):
        if not result.ok:
            summary.failed += 1
            summary.first_error = summary.first_error or f"{request.key_text}: {result.error}"
            continue
        row = {**request.key, "model": model, "response": result.text, "cache_key": result.key}
        if request.output == "image":
            from benchsmith.scoring.generated_images import store_image

            response, digest = store_image(handle.path, result.image)
            row = {**request.key, "model": model, "response": response, "image_sha256": digest,
                   "cache_key": result.key}  # fmt: skip
        handle.write(json.dumps(row, ensure_ascii=False) + "\n")
        handle.flush()  # an interrupted run keeps every row written so far
        summary.written += 1
        summary.from_cache += result.cached


def prediction_requests(args: argparse.Namespace):
    """The family's requests for a benchsmith folder (unless columns were named), else the
    generic prompt over the guessed or named columns."""
    from benchsmith.commands._common import (
        COLUMN_ROLES,
        column_roles,
        dataset_kind,
        evaluated_as,
        parse_roots,
        refuse_unused_episode_flags,  # fmt: skip
    )
    from benchsmith.family.base import Family
    from benchsmith.family.requests import PredictOptions, RequestSource, generic_requests
    from benchsmith.hf.dataset_view import DatasetView

    options = PredictOptions(text_only=args.text_only, instruction=args.instruction,
                             shots=tuple(args.shots or ()), seeds=tuple(args.seeds or ()),
                             sampler=args.sampler, scannet=args.scannet,
                             skip_references=args.skip_references)  # fmt: skip
    named = any(getattr(args, f"{role}_column", None) for role in COLUMN_ROLES)
    kind = family = None
    if (Path(args.dataset) / "build_info.json").is_file():
        kind, info = dataset_kind(args.dataset)
        family = evaluated_as(kind, info, args.dataset)
    uses = family.predict_options if isinstance(family, Family) and not named else ()
    refuse_unused_episode_flags(args, uses, ", not to this dataset")
    for flag in ("scannet", "skip_references"):
        if getattr(args, flag) and flag not in uses:
            from benchsmith.core.errors import BenchsmithError

            name = "--" + flag.replace("_", "-")
            raise BenchsmithError(f"{name} applies to MMIU's ScanNet images, not to this dataset",
                                  fix=f"drop {name}")  # fmt: skip
    if isinstance(family, Family) and not named:
        from benchsmith.commands._common import require_sample_config

        require_sample_config(args.dataset, kind, info, args.config)
        if family is not kind:  # a curated folder: its source family's requests, kept rows
            from benchsmith.curate.evaluate import curated_requests

            return curated_requests(args.dataset, info, args.config, args.split, family,
                                    options, parse_roots(args.root, kind))  # fmt: skip
        return kind.prediction_requests(RequestSource(args.dataset, info, args.config,
                                                      args.split, options))  # fmt: skip
    view = DatasetView(args.dataset, args.config, args.split, column_roles(args, args.dataset))
    return generic_requests(view, options)


def default_split(dataset: Path, config: str) -> str:
    """The split to predict when ``--split`` is not given: the config's only split, or
    ``query`` beside ``support`` (in-context episodes: the support split holds
    demonstrations); else an error listing the splits."""
    from benchsmith.core.errors import BenchsmithError
    from benchsmith.hf.reader import available_splits

    splits = available_splits(dataset, config)
    if len(splits) == 1:
        return splits[0]
    if set(splits) == {"query", "support"}:
        return "query"
    raise BenchsmithError(
        f"config {config!r} has {len(splits)} splits ({', '.join(splits) or 'none'}): "
        "which one to predict?", path=dataset, fix="pass --split with one of them")  # fmt: skip


def run_predict(args: argparse.Namespace) -> int:
    from benchsmith.core.llm import LLMClient, LLMConfig
    from benchsmith.core.progress import log

    if args.split is None:
        from benchsmith.commands._common import require_sample_config

        if (Path(args.dataset) / "build_info.json").is_file():
            from benchsmith.commands._common import dataset_kind

            kind, info = dataset_kind(args.dataset)
            require_sample_config(args.dataset, kind, info, args.config)
        args.split = default_split(args.dataset, args.config)

    requests = prediction_requests(args)
    client = LLMClient(
        LLMConfig(
            model=args.model,
            base_url=args.base_url,
            api_key_env=args.api_key_env,
            max_concurrency=args.concurrency,
            max_retries=args.max_retries,
            timeout_s=args.timeout,
            max_tokens=args.max_tokens,
            cache_dir=args.cache_dir,
        )
    )
    from benchsmith.core.outputs import output_lock

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with output_lock(out):  # a second predict appending to the same file refuses
        return _predict_into(args, requests, client, log)


def _asks_for_images(args: argparse.Namespace, chunk) -> bool:
    """Whether this chunk's requests ask for images; a flag that cannot apply, or a request the
    chosen endpoint cannot take, stops the run before anything is sent."""
    from benchsmith.core.errors import BenchsmithError

    if chunk[0].output != "image":
        if args.image_api:
            raise BenchsmithError(f"--image-api applies to text-to-image configs, and "
                                  f"{args.config!r} is answered with text", fix="drop --image-api")  # fmt: skip
        return False
    if args.image_api == "images":
        for request in chunk:
            inputs = sum(isinstance(p, bytes) for p in request.parts) * (not args.text_only)
            if inputs:
                raise BenchsmithError(
                    f"the images endpoint takes a text prompt only, and request "
                    f"{request.key_text} holds {inputs} demonstration image(s)",
                    fix="use --image-api chat (a server whose chat completions answer with an "
                    "image), or --shots 0",
                )  # fmt: skip
    return True


def _predict_into(args: argparse.Namespace, requests, client, log) -> int:
    from benchsmith.core.llm import require_ok
    from benchsmith.core.outputs import refuse_inputs

    refuse_inputs(Path(args.out), [args.dataset])
    existing = read_existing(args.out, args.model)
    summary = PredictSummary()
    seen = set(existing.done)

    def todo():
        for request in islice(requests, args.limit):
            if request.key_text in seen:
                summary.already_done += 1
                continue
            seen.add(request.key_text)
            yield request

    with LazyAppend(args.out) as handle:
        for chunk in _chunks(todo(), max(16, 8 * args.concurrency)):
            messages = [r.messages(args.detail, args.text_only) for r in chunk]
            if _asks_for_images(args, chunk):
                results = client.generate_images(messages, api=args.image_api or "chat",
                                                 desc=f"predict {args.model}")  # fmt: skip
            else:
                results = client.complete_many(messages, desc=f"predict {args.model}")
            if summary.written == 0 and not any(r.ok for r in results):
                require_ok(results, what=f"requests to {client.base_url}")
            _write_results(handle, chunk, results, args.model, summary)
    log(
        f"predict {args.model}: {summary.written} new rows ({summary.from_cache} from cache), "
        f"{summary.already_done} already in {args.out}, {summary.failed} failed"
        + (
            f", {existing.truncated_lines} truncated last line dropped"
            if existing.truncated_lines
            else ""
        )
    )
    if summary.failed:
        log(
            f"  first failure: {summary.first_error}\n  failed rows are not written: rerun to retry"
        )
        return 1
    return 0
