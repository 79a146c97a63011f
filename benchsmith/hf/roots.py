"""Source roots in ``build_info.json``: recorded relative to the dataset, resolved from there.

A published dataset names the folders its rows were built from (``roots``: the COCO captions
and images, the MiniImageNet and CLEVR copies, a curated subset's source dataset). They are
recorded *relative to the published folder* (``../../data/sources/clevr/CLEVR_v1.0``), so two
clones of one commit publish the same bytes wherever they live, and an audit finds the sources
from any working directory, or after the whole checkout moved. A root outside the project
that shares no sensible relative path (another drive) stays absolute.

An audit resolves each recorded root against the dataset folder; ``--root NAME=DIR`` replaces
one. When a root is not there, the audit says so once, naming the root and the flag to pass,
instead of a line per missing source file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError


def portable_roots(roots: Mapping[str, Any] | None, dataset_dir: Path) -> dict[str, Any]:
    """``roots`` with every path made relative (posix) to ``dataset_dir``; None stays None.

    Relative inputs are taken relative to the working directory (where the build ran).
    """
    base = Path(dataset_dir).absolute()
    out: dict[str, Any] = {}
    for name, value in (roots or {}).items():
        if value is None or not isinstance(value, str | os.PathLike):
            out[name] = value
            continue
        target = Path(os.path.abspath(value))
        try:
            out[name] = Path(os.path.relpath(target, base)).as_posix()
        except ValueError:  # no relative path between them (another drive)
            out[name] = target.as_posix()
    return out


def resolve_roots(
    recorded: Mapping[str, Any] | None,
    dataset_dir: Path,
    overrides: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """Absolute root folders: ``--root`` overrides win, recorded relative paths start at the
    dataset folder (whatever the working directory). Roots recorded as None are left out."""
    base = Path(dataset_dir).absolute()
    resolved: dict[str, str] = {}
    for name, value in (recorded or {}).items():
        if value is None or not isinstance(value, str):
            continue
        path = Path(value)
        resolved[name] = os.path.normpath(path if path.is_absolute() else base / path)
    for name, value in (overrides or {}).items():
        resolved[name] = os.path.abspath(value)
    return resolved


def require_roots(
    resolved: Mapping[str, str], recorded: Mapping[str, Any] | None, dataset_dir: Path
) -> None:
    """One clear error when source roots are absent, naming each and the ``--root`` to pass."""
    missing = [name for name, path in sorted(resolved.items()) if not Path(path).exists()]
    if not missing:
        return
    lines = [
        f"{name}: {resolved[name]} (recorded as {(recorded or {}).get(name)!r})" for name in missing
    ]
    raise BenchsmithError(
        f"{len(missing)} source root(s) of this dataset are not here, so its rows cannot be "
        "re-derived:\n    " + "\n    ".join(lines),
        path=Path(dataset_dir) / "build_info.json",
        fix="pass where they are now: "
        + " ".join(f"--root {name}=DIR" for name in missing)
        + " (or rebuild the sources first)",
    )


def parse_root_flags(values: list[str], names: tuple[str, ...], owner: str = "") -> dict[str, str]:
    """``--root NAME=DIR`` values as ``{NAME: DIR}``; a malformed one or an unknown NAME is an
    error listing the names ``owner`` (a family) accepts."""
    roots = {}
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not path or name not in names:
            # --root takes several values, so a folder written after it is read as one of them
            swallowed = "" if sep else (" (a folder written after --root is read as one of its "
                                        "values: put it before --root, or end the list with --)")  # fmt: skip
            raise BenchsmithError(
                f"--root {value!r} is not NAME=DIR with NAME one of {', '.join(names)}" + swallowed,
                fix=f"{'a ' + owner + ' dataset takes' if owner else 'use e.g.'} "
                f"--root {names[0]}=PATH",
            )
        roots[name] = path
    return roots
