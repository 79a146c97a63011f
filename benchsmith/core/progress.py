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
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from tqdm import tqdm

T = TypeVar("T")


@cache
def _tqdm() -> type[tqdm]:
    """tqdm's bar for terminals and notebooks, imported when the first bar is made: every
    command imports this module, and tqdm costs 30-50 ms of start-up (its version lookup goes
    through importlib.metadata). Imported as ``tqdm.auto`` imports it, without its asyncio
    half (20 ms more)."""
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


def progress(
    iterable: Iterable[T], *, total: int | None = None, desc: str = "", unit: str = "it"
) -> Iterator[T]:
    return iter(
        _tqdm()(
            iterable, total=total, desc=desc, unit=unit, disable=not progress_enabled(), leave=False
        )
    )


def progress_bar(
    *, total: int | None, desc: str, unit: str = "it", unit_scale: bool = False
) -> tqdm:
    return _tqdm()(
        total=total,
        desc=desc,
        unit=unit,
        unit_scale=unit_scale,
        disable=not progress_enabled(),
        leave=False,
    )


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
