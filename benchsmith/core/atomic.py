"""Write-then-rename helpers so that no reader ever sees a half-written output.

An interrupted stage leaves at most a hidden ``.NAME.tmp-*`` sibling behind (folders staged by
:func:`atomic_directory` are cleaned up by its next run); the previous complete output stays in
place until the new one is complete (contract 3).
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.outputs import check_replaceable, mark, output_lock, restore_moved_aside


def _tmp_sibling(path: Path, suffix: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.tmp-", suffix=suffix, dir=path.parent)
    os.fchmod(fd, 0o666 & ~_umask())  # mkstemp makes 0600; written files get the usual mode
    os.close(fd)
    return Path(name)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    path = Path(path)
    tmp = _tmp_sibling(path)
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | Path, value: Any) -> None:
    atomic_write_text(path, json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def _unused_sibling(path: Path, suffix: str = "") -> Path:
    """A hidden sibling name that no file has yet, for the writer to create.

    Why not :func:`_tmp_sibling`'s file: writers open their path with ``O_TRUNC``, and on
    ext4 (``auto_da_alloc``, the default) truncating an existing file, even an empty one, makes
    its ``close`` start writing the whole file to disk: 34 ms for a render's 82 MB parquet
    file, seconds for a full build's. A file the open creates is not truncated."""
    path.parent.mkdir(parents=True, exist_ok=True)
    while True:
        tmp = path.with_name(f".{path.name}.tmp-{secrets.token_hex(6)}{suffix}")
        if not os.path.lexists(tmp):
            return tmp


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary file path, not yet created; on success it replaces ``path``, on error
    it is removed."""
    path = Path(path)
    tmp = _unused_sibling(path, suffix=path.suffix)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def atomic_directory(path: str | Path, *, inputs: Iterable[str | Path] = ()) -> Iterator[Path]:
    """Yield an empty staging directory that replaces ``path`` as a whole on success.

    Only an output benchsmith wrote, and that is none of ``inputs``, is replaced
    (:func:`benchsmith.core.outputs.check_replaceable`); a second run writing the same output
    refuses (a lock). The old directory is moved aside and deleted only after the new one is in
    place, so a crash at any point leaves either the old or the new complete output, and the
    next run restores a moved-aside output whose replacement never arrived.
    """
    path = Path(path)
    inputs = list(inputs)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BenchsmithError(
            f"cannot create the output's folder ({exc.strerror})",
            path=path.parent,
            fix="choose an output folder you can write (--out)",
        ) from exc
    with output_lock(path):
        restore_moved_aside(path)
        check_replaceable(path, inputs)
        for stale in path.parent.glob(f".{path.name}.tmp-*"):
            shutil.rmtree(stale, ignore_errors=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.tmp-", dir=path.parent))
        staging.chmod(0o777 & ~_umask())  # mkdtemp makes 0700; outputs get the usual permissions
        try:
            yield staging
            mark(staging)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        old = None
        try:
            if path.exists():
                old = path.parent / f".{path.name}.tmp-old-{os.getpid()}"
                os.replace(path, old)
            os.replace(staging, path)
        except BaseException:
            if old is not None and not path.exists():
                os.replace(old, path)  # put the previous output back
            shutil.rmtree(staging, ignore_errors=True)
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask
