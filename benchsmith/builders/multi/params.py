"""The ``multi:`` block of ``params.yaml``: every key, its type and its allowed values."""

from __future__ import annotations

from typing import Any

from benchsmith.builders.multi.config import (
    SETTINGS_BLOCKS,
    MultiPlanSettings,
    MultiSourceFolders,
    OcrSettings,
)
from benchsmith.core.settings import settings_block


def params_fields() -> dict[str, Any]:
    return {  # every block declared once, on its dataclass
        **settings_block(MultiPlanSettings).fields,  # seed
        "ocr": settings_block(OcrSettings),
        **{name: settings_block(kind) for name, kind in SETTINGS_BLOCKS.items()},
        "sources": settings_block(MultiSourceFolders),
    }
