"""Read a predictions JSONL file line by line, with errors that name the file and line.

Every family's scorer reads the same kind of file (one JSON object per line, blank lines
allowed) and validates the rows its own way; this is the shared part (the one JSONL reader of
:mod:`benchsmith.core.json_files`), so an unreadable file or a malformed line is reported the
same way whatever is being scored.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchsmith.core.json_files import read_jsonl


def prediction_lines(path: Path, fix: str) -> Iterator[tuple[int, Any]]:
    """(1-based line number, parsed JSON) of every non-blank line; ``fix`` goes in errors."""
    return read_jsonl(path, what="predictions", fix=fix)
