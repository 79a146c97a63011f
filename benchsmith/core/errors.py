"""One error type for everything a user can fix.

The CLI catches :class:`BenchsmithError` and prints its message without a traceback, so every
message must name the file involved and say what to do about it (ARCHITECTURE.md contract 4).
"""

from __future__ import annotations

from pathlib import Path


class BenchsmithError(Exception):
    """An error caused by input or configuration, with the file and the fix in the message."""

    def __init__(self, message: str, *, path: str | Path | None = None, fix: str | None = None):
        self.path = str(path) if path is not None else None
        self.fix = fix
        parts = [message]
        if path is not None:
            parts.append(f"  file: {path}")
        if fix:
            parts.append(f"  fix: {fix}")
        super().__init__("\n".join(parts))


class SourceError(BenchsmithError):
    """A raw source file is missing, corrupt, malformed or fails its checksum."""


class PlanError(BenchsmithError):
    """The requested build cannot be planned from the sources (e.g. too few images)."""


class AuditError(BenchsmithError):
    """A published dataset cannot be audited (missing config, id or build info)."""
