"""VLMEvalKit's dataset TSV from a published folder, through the family interface.

VLMEvalKit reads a custom multiple-choice or short-answer dataset as one TSV (pandas,
tab-separated): ``index``, ``image`` (base64 of the image file; for several images a Python list
literal of base64 strings, which its ``toliststr`` reads), ``question``, option columns ``A``,
``B``, ... (empty where a row has fewer options; none at all for short answer), ``answer`` (the
letter, or the answer text), ``category`` and ``l2-category``. We add ``id`` (our sample id), so a
VLMEvalKit result can be joined back to the published row and its provenance.

Rows come from ``Family.harness_rows``: MMIU and MULTI map their own columns (MULTI exports SA and
FB and counts what it leaves out), the others the generic reading of their columns.
"""

from __future__ import annotations

import base64
import csv
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.core.atomic import atomic_path
from benchsmith.family.requests import HarnessRow


def image_cell(images: tuple[bytes, ...]) -> str:
    encoded = [base64.b64encode(i).decode("ascii") for i in images]
    if len(encoded) == 1:
        return encoded[0]
    return repr(encoded) if encoded else ""


@dataclass
class TsvSummary:
    rows: int = 0
    multiple_choice: int = 0
    short_answer: int = 0
    by_config: dict[str, int] = field(default_factory=dict)


def write_tsv(rows: Callable[[], Iterable[tuple[str, HarnessRow]]], out: str | Path
              ) -> TsvSummary:  # fmt: skip
    """Write the ``(config, row)`` pairs ``rows()`` yields to ``out`` atomically. ``rows`` is
    called twice: once to size the option columns, once to write, so no more than one row's
    images are held in memory."""
    width = max((len(r.options) for _, r in rows()), default=0)
    letters = [chr(65 + k) for k in range(width)]
    summary = TsvSummary()
    with atomic_path(out) as scratch, open(scratch, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["index", "id", "image", "question", *letters, "answer", "category",
                         "l2-category"])  # fmt: skip
        for index, (config, row) in enumerate(rows()):
            options = [*row.options, *([""] * (width - len(row.options)))]
            writer.writerow([index, row.id, image_cell(row.images), row.question, *options,
                             row.answer, row.category or config, row.l2_category])  # fmt: skip
            summary.rows += 1
            summary.multiple_choice += bool(row.options)
            summary.short_answer += not row.options
            summary.by_config[config] = summary.by_config.get(config, 0) + 1
    return summary
