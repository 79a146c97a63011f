"""The ``mmneedle:`` block of ``params.yaml``: every key, its type and its allowed values.

The CLI checks the whole params file against this before any step runs, so a typo
(``grid:`` for ``grids:``) is an error naming the closest key, not a silent default.
"""

from __future__ import annotations

from typing import Any

from benchsmith.builders.mmneedle.config import (
    ImageCheckConfig,
    MmneedleSourceFolders,
    PlanSettings,
    RenderConfig,
)
from benchsmith.core.settings import settings_block


def params_fields() -> dict[str, Any]:
    return {
        **settings_block(PlanSettings).fields,  # order, grids, ..., sizes.<profile>
        "render": settings_block(RenderConfig),  # declared once, on the dataclass
        "image_check": settings_block(ImageCheckConfig),
        "sources": settings_block(MmneedleSourceFolders),
    }
