"""The CLI verbs, each built from the registries so a new family, stage, scorer or source adds
no argparse code here. Each module exposes ``register(subparsers, words)`` (``words``: the
positional arguments after the verb, so a verb can build only the family or source asked for).
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any


def _module(name: str) -> Callable[[], ModuleType]:
    return lambda: importlib.import_module(f"benchsmith.commands.{name}")


# (verb, one-line help, its module), in the order `benchsmith --help` lists them
VERBS = (
    (
        "source",
        "get a raw source (COCO, CLEVR, MiniImageNet): sample, fetch, link, check, prepare",
        _module("source"),
    ),
    (
        "build",
        "run one build step of a benchmark family (plan, render, leakage, ...)",
        _module("build"),
    ),
    (
        "publish",
        "write a family's build as a Hugging Face dataset folder (card, build_info, shards)",
        _module("publish"),
    ),
    (
        "audit",
        "verify published rows against their sources (re-render, recount, re-check)",
        _module("audit"),
    ),
    ("score", "score a predictions JSONL against a published dataset", _module("score")),
    (
        "curate",
        "difficulty filtering, zero-pass review and leakage checks (LIME-style)",
        _module("curate"),
    ),
    (
        "predict",
        "run a model over a dataset split and write predictions JSONL (resumable)",
        _module("predict"),
    ),
    (
        "export",
        "write a published dataset in a harness's format (lmms-eval tasks, VLMEvalKit TSV)",
        _module("export"),
    ),
    (
        "report",
        "write an HTML page (and PNGs) to check a dataset, or a model's predictions, by eye",
        _module("report"),
    ),
    (
        "push",
        "upload a published dataset to a Hub dataset repo and tag its version",
        _module("push"),
    ),
)


def family_subparsers(
    parser: argparse.ArgumentParser, words: list[str]
) -> tuple[argparse._SubParsersAction, list[Any]]:
    """A ``FAMILY`` subcommand per registered family, and the families to build in full: the one
    named in ``words`` (only its code is imported), or all of them (for ``--help``). The others
    are listed by name only."""
    from benchsmith.builders import FAMILIES

    wanted = words[0] if words and words[0] in FAMILIES.names() else None
    families = parser.add_subparsers(dest="family", metavar="FAMILY", required=True)
    if wanted is None:
        return families, list(FAMILIES)
    for name in FAMILIES.names():
        if name != wanted:
            families.add_parser(name)
    return families, [FAMILIES.get(wanted)]
