"""The ``vlicl:`` block of ``params.yaml``: every key, its type and its allowed values.

The CLI checks the whole params file against this before any step runs, so a typo in a task
name or a size key is an error naming the closest valid one, not a silent default.
"""

from __future__ import annotations

from typing import Any

from benchsmith.builders.vlicl.config import (
    PROFILES,
    TASKS,
    LeakageConfig,
    VliclPlanSettings,
    VliclSourceFolders,
)
from benchsmith.core.schema import Block, BlockOf, ListOf, Value
from benchsmith.core.settings import settings_block

_COUNT = Value("int", minimum=1)


def _sizes() -> Block:
    return Block(
        {
            "open_mi": Block({"episodes": _COUNT, "ways": _COUNT, "shots": _COUNT}),
            "open_t2i_mi": Block({"episodes": _COUNT}),  # ways and shots: open_mi's
            "matching_mi": Block({"support": _COUNT, "query": _COUNT}),
            "clevr": Block({"support": _COUNT, "query": _COUNT}),
            "operators": Block({"support": _COUNT, "query_per_operator": _COUNT}),
            "textocr": Block({"support": _COUNT, "query": _COUNT}),
        }
    )


def params_fields() -> dict[str, Any]:
    return {
        **settings_block(VliclPlanSettings).fields,  # mode, tasks, seed, episode seeds, samplers
        "words": ListOf(Value("str"), non_empty=True),
        "shots": BlockOf(ListOf(Value("int", minimum=0)), keys=TASKS),
        "sizes": BlockOf(_sizes(), keys=PROFILES),
        "sources": settings_block(VliclSourceFolders),
        "leakage": settings_block(LeakageConfig),  # declared once, on the dataclass
    }
