"""Content hashes used for checksums, params hashes and content-addressed file names."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

_CHUNK = 1 << 20


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | Path) -> str:
    """Stream a file through sha256 so that multi-GB archives never sit in memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace: equal values give equal text, hence equal hashes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def params_hash(params: Any) -> str:
    """Hash of a params mapping, independent of key order."""
    return sha256_bytes(canonical_json(params).encode("utf-8"))


def stable_int(text: str) -> int:
    """A 32-bit integer derived from text, stable across runs and machines (unlike ``hash``)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:4], "little")
