"""The ``mmiu:`` block of ``params.yaml``: every key, its type and its allowed values."""

from __future__ import annotations

from typing import Any

from benchsmith.builders.mmiu.config import (
    FrameChoice,
    MmiuPlanSettings,
    MmiuSourceFolders,
    OptionStyle,
    ScenePlanSettings,
    ShortcutGate,
)
from benchsmith.core.settings import settings_block


def params_fields() -> dict[str, Any]:
    return {
        **settings_block(MmiuPlanSettings).fields,  # mode, tasks, seed, ..., sizes.<profile>
        "frames": settings_block(FrameChoice),  # per profile, declared once
        "options": settings_block(OptionStyle),
        "plan": settings_block(ScenePlanSettings),  # declared once, on the dataclass
        "shortcuts": settings_block(ShortcutGate),  # declared once, on the dataclass
        "sources": settings_block(MmiuSourceFolders),
    }
