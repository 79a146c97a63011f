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
from benchsmith.core.schema import check_node
from benchsmith.core.settings import setting, settings_block, settings_from

DEFAULT_MAX_PIXELS = 89_478_485
_max_pixels = DEFAULT_MAX_PIXELS


def max_pixels() -> int:
    return _max_pixels


def set_max_pixels(value: int) -> None:
    global _max_pixels
    _max_pixels = int(value)


@dataclass(frozen=True)
class ImageLimits:
    """What one image may claim to be (``images:`` in params.yaml)."""

    max_pixels: int = setting(
        DEFAULT_MAX_PIXELS, "largest width x height an image may claim in its header; a larger "
        "one is refused naming the file (Pillow's own default)", minimum=1, flag=False,
    )  # fmt: skip


@dataclass(frozen=True)
class ArchiveLimits:
    """What one zip may hold and expand to (``archives:`` in params.yaml). A limit decides
    whether a source is accepted, never the bytes built from it: no DVC stage lists it."""

    max_members: int = setting(
        1_000_000, "most members one zip may hold", minimum=1, flag=False, shapes_output=False
    )
    max_total_gib: float = setting(
        128.0,
        "most the whole zip may expand to, GiB uncompressed",
        minimum=0.001,
        flag=False,
        shapes_output=False,
    )
    max_ratio: float = setting(
        100.0, "most uncompressed / compressed, the whole zip and each member over 1 MiB",
        minimum=1.0, flag=False, shapes_output=False,
    )  # fmt: skip

    def __post_init__(self) -> None:  # 7 in params.yaml is 7.0
        object.__setattr__(self, "max_total_gib", float(self.max_total_gib))
        object.__setattr__(self, "max_ratio", float(self.max_ratio))

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
    """Apply ``images:`` and ``archives:`` from a params mapping (absent: the declared
    defaults); a wrong value is an error naming its key, the value and what is allowed."""
    chosen = {}
    for key, cls in (("images", ImageLimits), ("archives", ArchiveLimits)):
        block = params.get(key) if isinstance(params.get(key), dict) else {}
        problems: list[str] = []
        check_node(settings_block(cls), block, key, problems)
        if problems:
            raise BenchsmithError(problems[0], path="params.yaml",
                                  fix=f"correct {key} in params.yaml (docs/params.md lists its keys)")  # fmt: skip
        chosen[key] = settings_from(cls, block)
    set_max_pixels(chosen["images"].max_pixels)
    set_archive_limits(chosen["archives"])
