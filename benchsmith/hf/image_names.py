"""File names for published images that tell a model nothing.

An image's ``path`` travels with its bytes into every loader and harness, and some show it to
the model or write files under it. Source names carry answers: a MiniImageNet file name starts
with its class id (which answers ``open_mi`` and ``matching_mi``), a ScanNet frame number says
which candidate view follows view B. Every published (and rehydrated) image is therefore named
by its content: the first 16 hex digits of the sha256 of its bytes, with the source's
extension. The source's real name stays in the row's provenance and references.
"""

from __future__ import annotations

import hashlib
from pathlib import PurePosixPath

NAME_DIGITS = 16


def neutral_image_name(data: bytes, extension: str) -> str:
    """``<sha256[:16]>.<extension>``, e.g. ``3f9a0c41d2b7e815.jpg`` (``extension`` with or
    without its dot)."""
    return f"{hashlib.sha256(data).hexdigest()[:NAME_DIGITS]}.{extension.lstrip('.').lower()}"


def source_extension(file: str) -> str:
    """The extension of a source file name (``images/n0153282900000005.jpg`` -> ``jpg``)."""
    return PurePosixPath(file).suffix.lstrip(".")
