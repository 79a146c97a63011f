"""Limits every image decode respects, set once per run from ``params.yaml``.

``images.max_pixels`` (default: Pillow's own limit, 89,478,485 pixels, about a quarter of a
gigabyte decoded) caps the size an image may claim in its header: a larger one is refused with
an error naming the file instead of being decoded (a "decompression bomb", or a corrupt header).
The value lives here, at the ground floor, so worker processes receive it with their tasks.
"""

from __future__ import annotations

from typing import Any

from benchsmith.core.errors import BenchsmithError

DEFAULT_MAX_PIXELS = 89_478_485
_max_pixels = DEFAULT_MAX_PIXELS


def max_pixels() -> int:
    return _max_pixels


def set_max_pixels(value: int) -> None:
    global _max_pixels
    _max_pixels = int(value)


def configure(params: dict[str, Any]) -> None:
    """Apply ``images.max_pixels`` from a params mapping (absent: the default)."""
    images = params.get("images") if isinstance(params.get("images"), dict) else {}
    value = images.get("max_pixels", DEFAULT_MAX_PIXELS)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise BenchsmithError(
            f"images.max_pixels must be a positive integer, got {value!r}",
            path="params.yaml",
            fix=f"set images.max_pixels to e.g. {DEFAULT_MAX_PIXELS}",
        )
    set_max_pixels(value)
