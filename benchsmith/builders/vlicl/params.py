"""The ``vlicl:`` block of ``params.yaml``: every key, its type and its allowed values.

The CLI checks the whole params file against this before any step runs, so a typo in a task
name or a size key is an error naming the closest valid one, not a silent default.
"""

from __future__ import annotations

from typing import Any

from benchsmith.builders.vlicl.config import MODES, PROFILES, SAMPLERS, TASKS, LeakageConfig
from benchsmith.core.schema import Block, BlockOf, ListOf, Value
from benchsmith.core.settings import settings_block

_COUNT = Value("int", minimum=1)


def _sizes() -> Block:
    return Block(
        {
            "open_mi": Block({"episodes": _COUNT, "ways": _COUNT, "shots": _COUNT}),
            "matching_mi": Block({"support": _COUNT, "query": _COUNT}),
            "clevr": Block({"support": _COUNT, "query": _COUNT}),
            "operators": Block({"support": _COUNT, "query_per_operator": _COUNT}),
        }
    )


def params_fields() -> dict[str, Any]:
    return {
        "mode": Value("str", choices=MODES),
        "seed": Value("int", minimum=0),
        "tasks": ListOf(Value("str", choices=TASKS), non_empty=True),
        "words": ListOf(Value("str"), non_empty=True),
        "shots": BlockOf(ListOf(Value("int", minimum=0)), keys=TASKS),
        "episode_seeds": ListOf(Value("int", minimum=0), non_empty=True),
        "samplers": ListOf(Value("str", choices=SAMPLERS), non_empty=True),
        "sizes": BlockOf(_sizes(), keys=PROFILES),
        "sources": Block(
            {
                "miniimagenet": Value("path", nullable=True),
                "clevr": Value("path", nullable=True),
                "font": Value("path", nullable=True),
                "ingest_dir": Value("path", nullable=True),
            }
        ),
        "leakage": settings_block(LeakageConfig),  # declared once, on the dataclass
    }
