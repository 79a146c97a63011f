"""The ``mmiu:`` block of ``params.yaml``: every key, its type and its allowed values."""

from __future__ import annotations

from typing import Any

from benchsmith.builders.mmiu.config import (
    MODES,
    PROFILES,
    SCENE_SPLITS,
    TASKS,
    ScenePlanSettings,
    ShortcutGate,
)
from benchsmith.core.schema import Block, BlockOf, ListOf, Value
from benchsmith.core.settings import settings_block

_METRES = Value("float", minimum=0)
_DEGREES = Value("float", minimum=0, maximum=180)


def _frames() -> Block:
    return Block(
        {
            "stride": Value("int", minimum=1),
            "min_translation_m": _METRES,
            "max_translation_m": _METRES,
            "max_rotation_deg": _DEGREES,
            "min_overlap": Value("float", minimum=0, maximum=1),
            "depth_tolerance_m": _METRES,
            "distractor_min_translation_m": _METRES,
            "distractor_min_rotation_deg": _DEGREES,
        }
    )


def params_fields() -> dict[str, Any]:
    return {
        "mode": Value("str", choices=MODES),
        "seed": Value("int", minimum=0, nullable=True),
        "tasks": ListOf(Value("str", choices=TASKS), non_empty=True),
        "sizes": BlockOf(Block({"items_per_task": Value("int", minimum=1)}), keys=PROFILES),
        "scene_split": Value("str", choices=SCENE_SPLITS),
        "frames": BlockOf(_frames(), keys=PROFILES),
        "options": Block(
            {
                "n_options": Value("int", minimum=2, maximum=9),
                "pose_decimals": Value("int", minimum=1, maximum=9),
                "box_decimals": Value("int", minimum=1, maximum=6),
                "box_max_iou": Value("float", minimum=0, maximum=1),
                "depth_display_max_m": Value("float", minimum=0.1),
            }
        ),
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
