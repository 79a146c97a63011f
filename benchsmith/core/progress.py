"""Progress bars that behave in terminals, in CI logs and in tests.

Bars show on a terminal; in CI (``CI=true``) or when stderr is not a TTY they are disabled, so
logs stay readable. ``BENCHSMITH_PROGRESS=1`` forces them on, ``=0`` off.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from collections.abc import Iterable, Iterator
from functools import cache
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from tqdm import tqdm

T = TypeVar("T")


@cache
def _tqdm() -> type[tqdm]:
    """tqdm's bar for terminals and notebooks, imported when the first shown bar is made:
    every command imports this module, and tqdm costs 30-50 ms of start-up (its version lookup
    goes through importlib.metadata); a bar that is not shown never imports it. Imported as
    ``tqdm.auto`` imports it, without its asyncio half (20 ms more)."""
    from tqdm import TqdmExperimentalWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=TqdmExperimentalWarning)
        from tqdm.autonotebook import tqdm

    return tqdm


def progress_enabled() -> bool:
    forced = os.environ.get("BENCHSMITH_PROGRESS")
    if forced is not None:
        return forced not in ("0", "false", "")
    if os.environ.get("CI", "").lower() in ("1", "true"):
        return False
    return sys.stderr.isatty()


class Bar(Protocol):
    """What callers do with a bar: count, start over with a new total, close (or use it as a
    context manager)."""

    def update(self, n: float = 1) -> Any: ...

    def reset(self, total: float | None = None) -> Any: ...

    def close(self) -> Any: ...

    def __enter__(self) -> Bar: ...

    def __exit__(self, *exc: object) -> Any: ...


class _NoBar:
    """A bar that is not shown: what tqdm's disabled bar does (nothing), without importing
    tqdm, which a command writing to a log or a pipe would import only for this."""

    def update(self, n: float = 1) -> None:
        return None

    def reset(self, total: float | None = None) -> None:
        return None

    def close(self) -> None:
        return None

    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def progress(
    iterable: Iterable[T], *, total: int | None = None, desc: str = "", unit: str = "it"
) -> Iterator[T]:
    if not progress_enabled():
        return iter(iterable)
    return iter(_tqdm()(iterable, total=total, desc=desc, unit=unit, leave=False))


def progress_bar(
    *, total: int | None, desc: str, unit: str = "it", unit_scale: bool = False
) -> Bar:
    if not progress_enabled():
        return _NoBar()
    return _tqdm()(total=total, desc=desc, unit=unit, unit_scale=unit_scale, leave=False)


_quiet = 0


@contextlib.contextmanager
def quietly() -> Iterator[None]:
    """Silence :func:`log` (e.g. while an audit re-runs a build whose status lines would only
    confuse: they name scratch folders the user never asked for)."""
    global _quiet
    _quiet += 1
    try:
        yield
    finally:
        _quiet -= 1


def log(message: str) -> None:
    """User-facing status line on stderr (stdout is reserved for machine-readable output)."""
    if not _quiet:
        print(message, file=sys.stderr, flush=True)


def print_json(data: Any, asked: bool, **dump_options: Any) -> None:
    """Print ``data`` as indented JSON on stdout when ``--json`` was given."""
    if asked:
        import json
        import sys

        json.dump(data, sys.stdout, indent=2, **dump_options)
        print()
