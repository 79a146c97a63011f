"""Module attributes imported on first use (PEP 562), to re-export without an import cycle.

A source module (``sources/clevr.py``) re-exports helpers that live in modules importing it
back (``clevr_sample``, ``clevr_fetch``). Importing them at the top would be a cycle, so the
module sets ``__getattr__ = lazy_exports(__name__, {name: module})`` and each name is imported
the first time it is asked for.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(module_name: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that serves ``exports`` (attribute name -> module to import)."""

    def __getattr__(name: str) -> Any:
        if name in exports:
            return getattr(importlib.import_module(exports[name]), name)
        raise AttributeError(f"module {module_name!r} has no attribute {name!r}")

    return __getattr__
