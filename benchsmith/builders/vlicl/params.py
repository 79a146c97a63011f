"""The ``vlicl:`` block of ``params.yaml``: every key, its type and its allowed values.

The CLI checks the whole params file against this before any step runs, so a typo in a task
name or a size key is an error naming the closest valid one, not a silent default.
"""

from __future__ import annotations

from typing import Any

from benchsmith.builders.vlicl.config import (
    LeakageConfig,
    Sizes,
    VliclPlanSettings,
    VliclSourceFolders,
)
from benchsmith.builders.vlicl.shots import Shots
from benchsmith.core.settings import settings_block


def params_fields() -> dict[str, Any]:
    return {
        **settings_block(VliclPlanSettings).fields,  # mode, tasks, seeds, samplers, words
        "shots": settings_block(Shots),  # per task, declared once
        "sizes": settings_block(Sizes),  # per profile and task, declared once
        "sources": settings_block(VliclSourceFolders),
        "leakage": settings_block(LeakageConfig),  # declared once, on the dataclass
    }
