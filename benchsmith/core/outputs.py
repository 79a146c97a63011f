"""Which folders benchsmith may replace, and how two runs are kept from writing the same one.

A command replaces an output folder only when

- benchsmith wrote it: it holds the marker file :data:`MARKER` (every output written through
  :func:`benchsmith.core.atomic.atomic_directory` gets one), or the ``build_info.json`` /
  ``plan_info.json`` / ``render_info.json`` of an output from before the marker, or it is empty;
- it is not one of the command's inputs, nor a folder holding one (``render --out PLAN_DIR``
  or ``curate ... --out SOURCE_DATASET`` would otherwise delete what they read);
- it is not read-only (a folder without any write permission bit is never replaced, even by
  root, who ignores permissions);
- no other benchsmith run is writing it (an exclusive lock next to it; a second run refuses).

Anything else is refused with an error naming the folder, before any work is done.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.progress import log

MARKER = ".benchsmith-output"
MARKER_TEXT = '{"written_by": "benchsmith"}\n'
LEGACY_MARKERS = ("build_info.json", "plan_info.json", "render_info.json")


def written_by_benchsmith(folder: Path) -> bool:
    return any((folder / name).is_file() for name in (MARKER, *LEGACY_MARKERS))


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def check_replaceable(path: Path, inputs: Iterable[str | Path] = ()) -> None:
    """Refuse (with the folder and the fix) to replace ``path`` unless benchsmith may."""
    target = path.resolve()
    for item in inputs:
        source = Path(item).resolve()
        if _inside(source, target):
            raise BenchsmithError(
                f"refusing to write {path}: it is (or holds) this command's input {item}",
                path=path,
                fix="choose another output folder (--out)",
            )
    if not path.exists() and not path.is_symlink():
        return
    if path.is_symlink() or not path.is_dir():
        raise BenchsmithError(
            f"refusing to replace {path}: it is not a folder benchsmith wrote",
            path=path,
            fix="choose another output folder (--out), or move it away yourself",
        )
    if not os.access(path, os.W_OK) or not path.stat().st_mode & 0o222:
        raise BenchsmithError(
            f"the output folder {path} is read-only; it is left as it is",
            path=path,
            fix="make it writable (chmod u+w) or choose another output folder (--out)",
        )
    if any(path.iterdir()) and not written_by_benchsmith(path):
        raise BenchsmithError(
            f"refusing to replace {path}: it holds files benchsmith did not write",
            path=path,
            fix="choose another output folder (--out), or move its files away yourself",
        )


def restore_moved_aside(path: Path) -> None:
    """Finish a swap a crash interrupted: bring back a moved-aside output when the target is
    missing; drop it when the new output is in place (both are ours, by their names)."""
    for old in sorted(path.parent.glob(f".{path.name}.tmp-old-*")):
        if not path.exists():
            os.replace(old, path)
            log(f"restored {path} from {old.name}, left by an interrupted run")
        else:
            shutil.rmtree(old, ignore_errors=True)


@contextlib.contextmanager
def output_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` for the run; a second run refuses at once.

    The lock is a hidden file next to the output, removed when the run ends. A run that locked
    a lock file another run has just removed sees that its file is no longer the one at that
    path and refuses too, so two runs can never both believe they hold the lock.
    """
    lock_path = path.parent / f".{path.name}.lock"
    try:
        handle = open(lock_path, "a+")  # noqa: SIM115 (held for the whole run)
    except OSError as exc:
        raise BenchsmithError(
            f"cannot write next to the output folder ({exc.strerror})",
            path=path.parent,
            fix="make the folder writable or choose another output folder (--out)",
        ) from exc
    busy = BenchsmithError(
        f"another benchsmith run is writing {path}",
        path=lock_path,
        fix="wait for it to finish, then run again",
    )
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise busy from None
        try:
            current = os.stat(lock_path).st_ino
        except FileNotFoundError:
            current = None
        if current != os.fstat(handle.fileno()).st_ino:
            raise busy  # the run that held it removed it meanwhile: not ours to use
        try:
            yield
        finally:
            lock_path.unlink(missing_ok=True)  # still holding the lock: nobody else can
    finally:
        handle.close()


def mark(folder: Path) -> None:
    (folder / MARKER).write_text(MARKER_TEXT, encoding="utf-8")


def is_read_only(mode: int) -> bool:
    return not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
