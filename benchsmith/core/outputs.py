"""Which folders benchsmith may replace, and how two runs are kept from writing the same one.

A command replaces an output folder only when

- benchsmith wrote it and nobody added to it since: its marker file :data:`MARKER` (every
  output written through :func:`benchsmith.core.atomic.atomic_directory` gets one) lists every
  file it wrote with its size, and every file the folder holds now is one of them, the same
  size; or it is empty. A file merely *named* like benchsmith's (a ``build_info.json`` of
  another tool, a copied marker) confers nothing: the marker must be benchsmith's format and
  must account for the folder's files. A marker from before the listing
  (``{"written_by": "benchsmith"}`` exactly) is still honoured;
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
import json
import os
import shutil
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.progress import log

MARKER = ".benchsmith-output"
OLD_MARKER_TEXT = '{"written_by": "benchsmith"}\n'  # before the listing (2026-11-27)


def _files_now(folder: Path) -> dict[str, int]:
    """Every file under ``folder`` but the marker, by POSIX relative path, with its size (a
    link counts as a file: what it points to is never followed)."""
    found = {}
    for path in folder.rglob("*"):
        if path.is_symlink() or path.is_file():
            relative = path.relative_to(folder).as_posix()
            if relative != MARKER:
                found[relative] = path.lstat().st_size
    return found


def foreign_files(folder: Path) -> list[str] | None:
    """The files in ``folder`` benchsmith did not write there ([] when it wrote them all);
    None when the folder has no benchsmith marker at all (or one that is not benchsmith's)."""
    marker = folder / MARKER
    if not marker.is_file() or marker.is_symlink():
        return None
    try:
        text = marker.read_text(encoding="utf-8")
        record = json.loads(text)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if text == OLD_MARKER_TEXT:
        return []
    files = record.get("files") if isinstance(record, dict) else None
    if record.get("written_by") != "benchsmith" or not isinstance(files, dict):
        return None
    return sorted(name for name, size in _files_now(folder).items() if files.get(name) != size)


def written_by_benchsmith(folder: Path) -> bool:
    return foreign_files(folder) == []


def _inside(child: Path, parent: Path) -> bool:
    return child == parent or parent in child.parents


def refuse_inputs(path: Path, inputs: Iterable[str | Path]) -> None:
    """An output that is an input, holds one, or lies inside an input folder is refused: the
    first would delete what the command reads, the last would write into it."""
    target = path.resolve()
    for item in inputs:
        source = Path(item).resolve()
        if _inside(source, target):
            raise BenchsmithError(
                f"refusing to write {path}: it is (or holds) this command's input {item}",
                path=path,
                fix="choose another output (--out)",
            )
        if source.is_dir() and _inside(target, source):
            raise BenchsmithError(
                f"refusing to write {path}: it is inside this command's input {item}",
                path=path,
                fix="choose an output outside the input folder (--out)",
            )


def check_replaceable(path: Path, inputs: Iterable[str | Path] = ()) -> None:
    """Refuse (with the folder and the fix) to replace ``path`` unless benchsmith may."""
    refuse_inputs(path, inputs)
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
    if any(path.iterdir()):
        foreign = foreign_files(path)
        if foreign is None:
            raise BenchsmithError(
                f"refusing to replace {path}: it holds files benchsmith did not write (no "
                f"benchsmith marker {MARKER} listing them)",
                path=path,
                fix="choose another output folder (--out), or move its files away yourself",
            )
        if foreign:
            shown = ", ".join(foreign[:5]) + (" ..." if len(foreign) > 5 else "")
            raise BenchsmithError(
                f"refusing to replace {path}: {len(foreign)} file(s) in it were added or "
                f"changed since benchsmith wrote it ({shown})",
                path=path,
                fix="move those files out of the folder (they would be deleted with it), "
                "then run again",
            )


def _file_record(path: Path) -> Path:
    return path.parent / f".{path.name}{MARKER}"


def check_file_replaceable(path: Path, inputs: Iterable[str | Path] = ()) -> None:
    """A single-file output (``export vlmevalkit --out FILE``) replaces an existing file only
    when benchsmith wrote it and it is unchanged since: its record next to it
    (``.FILE.benchsmith-output``) holds the file's sha256."""
    from benchsmith.core.hashing import sha256_file

    refuse_inputs(path, inputs)
    if not path.exists() and not path.is_symlink():
        return
    if path.is_symlink() or not path.is_file():
        raise BenchsmithError(f"refusing to replace {path}: it is not a file benchsmith wrote",
                              path=path, fix="choose another output file (--out)")  # fmt: skip
    try:
        record = json.loads(_file_record(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        record = None
    if not (isinstance(record, dict) and record.get("written_by") == "benchsmith"
            and record.get("sha256") == sha256_file(path)):  # fmt: skip
        raise BenchsmithError(
            f"refusing to replace {path}: benchsmith did not write it, or it changed since",
            path=path,
            fix="choose another output file (--out), or move this one away yourself",
        )


def mark_file(path: Path) -> None:
    """Record that benchsmith wrote ``path`` as it is now (see :func:`check_file_replaceable`)."""
    from benchsmith.core.atomic import atomic_write_text
    from benchsmith.core.hashing import sha256_file

    record = {"written_by": "benchsmith", "file": path.name, "sha256": sha256_file(path)}
    atomic_write_text(_file_record(path), json.dumps(record) + "\n")


def forget_file(path: Path) -> None:
    """Remove a single-file output benchsmith wrote, and its record; call it after
    :func:`check_file_replaceable` passed (a file that is not ours, or changed, is never
    removed)."""
    path.unlink(missing_ok=True)
    _file_record(path).unlink(missing_ok=True)


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
    """Write the marker: benchsmith's, listing every file of the finished output and its size,
    so a later run replaces the folder only while it holds nothing else."""
    record = {"written_by": "benchsmith", "files": dict(sorted(_files_now(folder).items()))}
    (folder / MARKER).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def is_read_only(mode: int) -> bool:
    return not mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
