"""Rows in batches sized by their embedded image bytes: one batch is one parquet row group, so a
family's publication respects the shard size it is given without holding a split in memory."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any


def batches_by_image_bytes(
    rows: Iterable[dict[str, Any]], max_bytes: int, max_rows: int
) -> Iterator[list[dict[str, Any]]]:
    """Lists of at most ``max_rows`` rows whose embedded images total about ``max_bytes``
    (an image entry may be None: a reference, not embedded)."""
    batch: list[dict[str, Any]] = []
    size = 0
    for row in rows:
        batch.append(row)
        size += sum(len(image["bytes"]) for image in row.get("images") or [] if image)
        if len(batch) >= max_rows or size >= max_bytes:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch
