"""Explicit registries whose entries load on first use.

A registry (``FAMILIES``, ``STAGES``, ``SCORERS``, ``SOURCES``) is a tuple of :class:`Entry`,
one line per entry, in a fixed order: no directory scanning, no import-time side effects, no
``__getattr__`` re-exports. Each entry names the module that defines the object, like a
setuptools entry point, and the module is imported only when the object is asked for. That is
what keeps families apart at run time: building MMNeedle never imports VL-ICL's code, so a DVC
stage's dependencies can list exactly the folders it runs, and an edit to one family reruns
none of another's stages.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from benchsmith.core.errors import BenchsmithError

T = TypeVar("T")


@dataclass(frozen=True)
class Entry:
    """``name`` is defined as ``attribute`` of ``module``."""

    name: str
    module: str
    attribute: str

    def load(self) -> Any:
        return getattr(importlib.import_module(self.module), self.attribute)


class Registry(Generic[T]):
    """Entries in order; ``get(name)`` loads one, iterating loads them all."""

    def __init__(self, kind: str, *entries: Entry):
        names = [e.name for e in entries]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate {kind} names in {names}")
        self.kind = kind
        self.entries = entries

    def names(self) -> list[str]:
        return [e.name for e in self.entries]

    def get(self, name: str) -> T:
        for entry in self.entries:
            if entry.name == name:
                return entry.load()
        raise BenchsmithError(
            f"unknown {self.kind} {name!r}", fix=f"use one of: {', '.join(self.names())}"
        )

    def __iter__(self) -> Iterator[T]:
        return (entry.load() for entry in self.entries)

    def __len__(self) -> int:
        return len(self.entries)
