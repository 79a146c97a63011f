"""The ``mmneedle:`` block of ``params.yaml``: every key, its type and its allowed values.

The CLI checks the whole params file against this before any step runs, so a typo
(``grid:`` for ``grids:``) is an error naming the closest key, not a silent default.
"""

from __future__ import annotations

from typing import Any

from benchsmith.builders.mmneedle.config import ORDERS, ImageCheckConfig, RenderConfig
from benchsmith.core.schema import Block, BlockOf, ListOf, Value
from benchsmith.core.settings import settings_block

_COUNTS = ListOf(Value("int", minimum=1), non_empty=True)


def params_fields() -> dict[str, Any]:
    return {
        "order": Value("str", choices=ORDERS),
        "grids": _COUNTS,
        "haystack_sizes": _COUNTS,
        "needle_counts": _COUNTS,
        "sizes": BlockOf(
            Block(
                {
                    "pool_size": Value("int", minimum=1),
                    "samples_per_config": Value("int", minimum=1),
                }
            ),
            keys=("sample", "full"),
        ),
        "render": settings_block(RenderConfig),  # declared once, on the dataclass
        "image_check": settings_block(ImageCheckConfig),
    }
