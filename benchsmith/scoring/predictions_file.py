"""Read a predictions JSONL file line by line, with errors that name the file and line.

Every family's scorer reads the same kind of file (one JSON object per line, blank lines
allowed) and validates the rows its own way; this is the shared part, so an unreadable file
or a malformed line is reported the same way whatever is being scored.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError


def prediction_lines(path: Path, fix: str) -> Iterator[tuple[int, Any]]:
    """(1-based line number, parsed JSON) of every non-blank line; ``fix`` goes in errors."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchsmithError(f"cannot read predictions: {exc}", path=path, fix=fix) from exc
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise BenchsmithError(
                f"line {number}: invalid JSON ({exc})", path=path, fix=fix
            ) from exc
