"""Look inside PNG bytes: which chunks a writer emitted (metadata chunks break byte equality)."""

from __future__ import annotations

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_chunk_types(data: bytes) -> list[bytes]:
    """Chunk types in file order, e.g. ``[b"IHDR", b"IDAT", b"IEND"]``."""
    assert data[:8] == PNG_SIGNATURE
    types, offset = [], 8
    while offset < len(data):
        length = int.from_bytes(data[offset : offset + 4], "big")
        types.append(data[offset + 4 : offset + 8])
        offset += 12 + length
    return types
