"""The ``multi:`` block of ``params.yaml``: every key, its type and its allowed values."""

from __future__ import annotations

from typing import Any

from benchsmith.builders.multi.config import SETTINGS_BLOCKS, OcrSettings
from benchsmith.core.schema import Block, Value
from benchsmith.core.settings import settings_block


def params_fields() -> dict[str, Any]:

    return {
        "seed": Value("int", minimum=0, nullable=True),
        "ocr": settings_block(OcrSettings),  # declared once, on the dataclass
        # declared once, on the dataclasses
        **{name: settings_block(kind) for name, kind in SETTINGS_BLOCKS.items()},
        "sources": Block(
            {
                "exams": Value("path", nullable=True),
                "release": Value("path", nullable=True),
            }
        ),
    }
