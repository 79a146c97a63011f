"""The ``vlicl:`` block of ``params.yaml``: every key, its type and its allowed values.

The CLI checks the whole params file against this before any step runs, so a typo in a task
name or a size key is an error naming the closest valid one, not a silent default.
"""

from __future__ import annotations

from typing import Any

from benchsmith.builders.vlicl.config import (
    TASKS,
    LeakageConfig,
    Sizes,
    VliclPlanSettings,
    VliclSourceFolders,
)
from benchsmith.core.schema import BlockOf, ListOf, Value
from benchsmith.core.settings import settings_block


def params_fields() -> dict[str, Any]:
    return {
        **settings_block(VliclPlanSettings).fields,  # mode, tasks, seed, episode seeds, samplers
        "words": ListOf(Value("str"), non_empty=True),
        "shots": BlockOf(ListOf(Value("int", minimum=0)), keys=TASKS),
        "sizes": settings_block(Sizes),  # per profile and task, declared once
        "sources": settings_block(VliclSourceFolders),
        "leakage": settings_block(LeakageConfig),  # declared once, on the dataclass
    }
