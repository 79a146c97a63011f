"""Read JSON and JSONL input files with one clear error for bad input.

Every JSON-lines file benchsmith reads (predictions, judge predictions, human verdicts, build
rows, reference corpora) goes through :func:`read_jsonl`, so an unreadable file or a malformed
line is reported the same way everywhere: the message says which line and what is wrong, the
error names ``FILE:LINE`` and the caller's fix. A truncated download or a wrong file is the usual
cause of a bad JSON file, so :func:`load_json` names the file and how to get it again instead of
surfacing a bare ``JSONDecodeError``.

:func:`scan_appendable_jsonl` serves files that a command appends to while it runs
(``benchsmith predict``): a process killed mid-write leaves a torn last line, which is reported
and cut off instead of failing the resumed run.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from benchsmith.core.errors import BenchsmithError, SourceError


def load_json(path: Path, *, what: str, fix: str) -> Any:
    """Parse ``path`` (bytes, so UTF-8/16/32 are detected as JSON allows); ``what`` names it."""
    try:
        return json.loads(Path(path).read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SourceError(f"{what} is not valid JSON ({exc})", path=path, fix=fix) from exc


BOM = b"\xef\xbb\xbf"


def _open_binary(path: Path) -> IO[bytes]:
    return gzip.open(path, "rb") if path.suffix == ".gz" else open(path, "rb")  # noqa: SIM115


def read_jsonl(
    path: str | Path,
    *,
    what: str,
    fix: str,
    error: type[BenchsmithError] = BenchsmithError,
) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of every non-blank line, streamed one line at a time.

    ``what`` names the file in messages ("predictions", "judge predictions"); ``fix`` says how
    to repair it. ``.gz`` files are decompressed transparently; a UTF-8 byte-order mark at the
    start is skipped (editors write one); a line that is not UTF-8 is named by its number and
    the byte where it breaks. A missing or unreadable file and
    a line that is not JSON raise ``error`` naming ``FILE:LINE``; what a valid line must hold is
    the caller's to check.
    """
    path = Path(path)
    if not path.is_file():
        raise error(f"{what} file not found", path=path, fix=fix)
    number = 0
    try:
        with _open_binary(path) as handle:
            for number, raw in enumerate(handle, start=1):
                if number == 1 and raw.startswith(BOM):  # an editor's byte-order mark
                    raw = raw[len(BOM) :]
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise error(
                        f"line {number} is not UTF-8 (byte {exc.start + 1} of the line: "
                        f"{raw[exc.start : exc.start + 4]!r})",
                        path=f"{path}:{number}",
                        fix=f"save the file as UTF-8; {fix}",
                    ) from None
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise error(
                        f"line {number} is not valid JSON ({exc.msg} at column {exc.colno})",
                        path=f"{path}:{number}",
                        fix=fix,
                    ) from None
                yield number, value
    except (OSError, EOFError) as exc:
        raise error(
            f"cannot read {what} ({type(exc).__name__}: {exc})",
            path=f"{path}:{number + 1}" if number else path,
            fix=f"the file must be UTF-8 JSON lines (gzip-compressed if it ends in .gz); {fix}",
        ) from exc


@dataclass
class AppendableScan:
    """What a previous run left in a file it appends JSON lines to."""

    rows: list[tuple[int, Any]] = field(default_factory=list)
    complete_bytes: int = 0  # length of the file up to the end of its last complete line
    torn_tail: bool = False  # the last line was cut mid-write (and is not in ``rows``)
    missing_newline: bool = False  # the last line is complete JSON but lacks its newline


def scan_appendable_jsonl(path: str | Path, *, fix: str) -> AppendableScan:
    """Rows of a JSONL file some run appends to; a torn *last* line is tolerated, not an error.

    Only the last line may be torn (a kill can only interrupt the write in progress); a bad
    line anywhere else is corruption and raises naming ``FILE:LINE``.
    """
    path = Path(path)
    scan = AppendableScan()
    if not path.is_file():
        return scan
    data = path.read_bytes()
    lines = data.split(b"\n")
    scan.complete_bytes = len(data)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        is_last = number == len(lines)  # no newline after it: possibly cut mid-write
        try:
            value = json.loads(line)
        except ValueError as exc:
            if is_last and line.lstrip().startswith(b"{"):  # a row cut mid-write, not a
                scan.torn_tail = True  # line some other writer left: only that is dropped
                scan.complete_bytes = len(data) - len(line)
                break
            raise BenchsmithError(
                f"line {number} is not valid JSON ({exc})", path=f"{path}:{number}", fix=fix
            ) from None
        scan.rows.append((number, value))
        scan.missing_newline = is_last
    return scan
