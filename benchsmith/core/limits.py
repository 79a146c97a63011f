"""Limits every image decode and every archive extraction respects, set once per run from
``params.yaml``.

``images.max_pixels`` (default: Pillow's own limit, 89,478,485 pixels, about a quarter of a
gigabyte decoded) caps the size an image may claim in its header: a larger one is refused with
an error naming the file instead of being decoded (a "decompression bomb", or a corrupt header).
The value lives here, at the ground floor, so worker processes receive it with their tasks.

``archives`` bounds what an untrusted zip may expand to before anything is pinned or written
(a "zip bomb": a 1 MB file that inflates to gigabytes): its member count, its total
uncompressed size, and how much it inflates (the whole archive, and each member larger than
1 MiB, against its compressed size). The defaults pass every real source (COCO's val2014.zip:
40,504 members, 6.6 GB, about 1x; CLEVR_v1.0.zip: 18 GB; annotation JSON: under 10x).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchsmith.core.errors import BenchsmithError

DEFAULT_MAX_PIXELS = 89_478_485
_max_pixels = DEFAULT_MAX_PIXELS


def max_pixels() -> int:
    return _max_pixels


def set_max_pixels(value: int) -> None:
    global _max_pixels
    _max_pixels = int(value)


@dataclass(frozen=True)
class ArchiveLimits:
    """What one zip may hold and expand to (``archives:`` in params.yaml)."""

    max_members: int = 1_000_000
    max_total_gib: float = 128.0
    max_ratio: float = 100.0  # uncompressed / compressed

    @property
    def max_total_bytes(self) -> int:
        return int(self.max_total_gib * 1024**3)


_archive_limits = ArchiveLimits()


def archive_limits() -> ArchiveLimits:
    return _archive_limits


def set_archive_limits(limits: ArchiveLimits) -> None:
    global _archive_limits
    _archive_limits = limits


def configure(params: dict[str, Any]) -> None:
    """Apply ``images.max_pixels`` and ``archives.*`` from a params mapping (absent: the
    defaults)."""
    images = params.get("images") if isinstance(params.get("images"), dict) else {}
    value = images.get("max_pixels", DEFAULT_MAX_PIXELS)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise BenchsmithError(
            f"images.max_pixels must be a positive integer, got {value!r}",
            path="params.yaml",
            fix=f"set images.max_pixels to e.g. {DEFAULT_MAX_PIXELS}",
        )
    set_max_pixels(value)
    archives = params.get("archives") if isinstance(params.get("archives"), dict) else {}
    defaults = ArchiveLimits()
    chosen = {}
    for name in ("max_members", "max_total_gib", "max_ratio"):
        value = archives.get(name, getattr(defaults, name))
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise BenchsmithError(
                f"archives.{name} must be a positive number, got {value!r}",
                path="params.yaml",
                fix=f"set archives.{name} to e.g. {getattr(defaults, name)}",
            )
        chosen[name] = value
    set_archive_limits(ArchiveLimits(int(chosen["max_members"]), float(chosen["max_total_gib"]),
                                     float(chosen["max_ratio"])))  # fmt: skip
