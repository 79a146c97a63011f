"""``benchsmith source VERB NAME``: put a raw source on disk, from the ``SOURCES`` registry."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from benchsmith.commands.common_flags import add_params_option
from benchsmith.core.params import load_params
from benchsmith.core.progress import log
from benchsmith.sources import SOURCES
from benchsmith.sources.base import VERBS, option_values

VERB_HELP = {
    "sample": "write a miniature copy in the exact real format (offline, seconds)",
    "fetch": "download (resumable, checked against a lock file) and extract safely",
    "link": "use a copy you already have (checked, then linked; parquet copies converted)",
    "check": "verify a copy's layout and counts, print a JSON summary",
    "prepare": "sample, link or fetch as params.yaml's profile and sources.NAME block say",
    "unpin": "list what a fetch pinned in its lock file, or clear pins so the next fetch "
    "downloads and pins afresh",
}


def register(subparsers: argparse._SubParsersAction, words: list[str]) -> None:
    wanted = words[1] if len(words) > 1 and words[1] in SOURCES.names() else None
    chosen = [SOURCES.get(wanted)] if wanted else list(SOURCES)
    if wanted and words[0] in VERBS and words[0] not in chosen[0].verbs:
        raise chosen[0].absent(words[0])  # clearer than argparse's "invalid choice"
    parser = subparsers.add_parser(
        "source",
        help="get a raw source (COCO, CLEVR, MiniImageNet, ScanNet, exams): sample, fetch, link, "
        "check, prepare, unpin",
        description="Put a raw source on disk in its real layout. Sources: "
        + "; ".join(f"{s.name}: {s.title}, {s.layout}" for s in chosen),
    )
    verbs = parser.add_subparsers(dest="source_verb", metavar="VERB", required=True)
    for verb in (*VERBS, "unpin"):
        names = [s for s in chosen if verb in s.verbs or (verb == "unpin" and "fetch" in s.verbs)]

        verb_parser = verbs.add_parser(
            verb, help=VERB_HELP[verb], description=f"{VERB_HELP[verb]}."
        )
        per_source = verb_parser.add_subparsers(dest="source_name", metavar="NAME", required=True)
        for source in names:
            p = per_source.add_parser(
                source.name, help=source.title, description=f"{source.title}: {source.layout}."
            )
            _add_verb_arguments(verb, source, p)
            p.set_defaults(handler=run_source)


def _add_verb_arguments(verb: str, source, parser: argparse.ArgumentParser) -> None:
    if verb == "unpin":
        lock = next(o for o in source.fetch_options if o.name == "lock")
        parser.add_argument("entries", nargs="*", metavar="ENTRY",
                            help="pinned entries to clear, as the lock names them (none: list "
                            "them)")  # fmt: skip
        parser.add_argument("--lock", type=Path, default=Path(lock.default), metavar="FILE",
                            help=f"the lock file (default: {lock.default})")  # fmt: skip
        parser.add_argument("--all", action="store_true", help="clear every pin in the lock")
        return
    if verb == "link":
        parser.add_argument("src", type=Path, metavar="SRC", help="your existing copy")
    if verb == "check":
        parser.add_argument("root", type=Path, metavar="DIR", help="the copy to check")
    else:
        parser.add_argument(
            "--out", type=Path, required=True, metavar="DIR", help=f"destination ({source.layout})"
        )
    if verb == "sample":
        parser.add_argument("--seed", type=int, default=0, metavar="S", help="seed (default: 0)")
    options = {"sample": source.sample_options, "fetch": source.fetch_options}.get(verb, ())
    options = source.check_options if verb == "check" else options
    for option in options:
        option.add_to(parser)
    if verb == "prepare":
        add_params_option(parser)


def run_source(args: argparse.Namespace) -> int:
    source = SOURCES.get(args.source_name)
    verb = args.source_verb
    if verb == "sample":
        out = source.sample(
            args.out, seed=args.seed, **option_values(source.sample_options, vars(args), {})
        )
    elif verb == "fetch":
        out = source.fetch(args.out, **option_values(source.fetch_options, vars(args), {}))
    elif verb == "link":
        out = source.link(args.src, args.out)
    elif verb == "unpin":
        return _unpin(args)
    elif verb == "check":
        summary = source.check(args.root, **option_values(source.check_options, vars(args), {}))
        json.dump(summary, sys.stdout, indent=2, sort_keys=True)
        print()
        return 0
    else:
        out = source.prepare(args.out, load_params(args.params))
    log(f"{source.name} {verb}: ready in {out}")
    return 0


def _unpin(args: argparse.Namespace) -> int:
    from benchsmith.sources.fetching.lockfile import pinned, unpin

    if not args.entries and not args.all:  # list what is pinned, to copy from
        for entry in pinned(args.lock):
            print(entry)
        return 0
    removed = unpin(args.lock, args.entries, everything=args.all)
    log(f"{args.source_name} unpin: {len(removed)} pin(s) cleared from {args.lock}; the next "
        f"`benchsmith source fetch {args.source_name}` downloads and pins them afresh")  # fmt: skip
    return 0
