"""Read a JSON source file (COCO captions, CLEVR scenes) with one clear error for bad input.

A truncated download or a wrong file is the usual cause, so the error names the file, what it
should have been and how to get it again instead of surfacing a bare ``JSONDecodeError``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchsmith.core.errors import SourceError


def load_json(path: Path, *, what: str, fix: str) -> Any:
    """Parse ``path`` (bytes, so UTF-8/16/32 are detected as JSON allows); ``what`` names it."""
    try:
        return json.loads(Path(path).read_bytes())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SourceError(f"{what} is not valid JSON ({exc})", path=path, fix=fix) from exc
