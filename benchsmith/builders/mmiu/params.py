"""The ``mmiu:`` block of ``params.yaml``: every key, its type and its allowed values."""

from __future__ import annotations

from typing import Any

from benchsmith.builders.mmiu.config import (
    MODES,
    PROFILES,
    SCENE_SPLITS,
    TASKS,
    FrameChoice,
    OptionStyle,
    ScenePlanSettings,
    ShortcutGate,
)
from benchsmith.core.schema import Block, BlockOf, ListOf, Value
from benchsmith.core.settings import settings_block


def params_fields() -> dict[str, Any]:
    return {
        "mode": Value("str", choices=MODES),
        "seed": Value("int", minimum=0, nullable=True),
        "tasks": ListOf(Value("str", choices=TASKS), non_empty=True),
        "sizes": BlockOf(Block({"items_per_task": Value("int", minimum=1)}), keys=PROFILES),
        "scene_split": Value("str", choices=SCENE_SPLITS),
        "frames": BlockOf(settings_block(FrameChoice), keys=PROFILES),  # declared once
        "options": settings_block(OptionStyle),
        "jigsaw_grid": Value("int", minimum=2, maximum=4),
        "plan": settings_block(ScenePlanSettings),  # declared once, on the dataclass
        "shortcuts": settings_block(ShortcutGate),  # declared once, on the dataclass
        "sources": Block(
            {
                "scannet": Value("path", nullable=True),
                "coco": Value("path", nullable=True),
                "ingest_dir": Value("path", nullable=True),
            }
        ),
    }
