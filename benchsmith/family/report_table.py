"""What a family adds to ``benchsmith report``: the checks its build ran, as small tables.

The report itself is shared (items, distributions, provenance, a predictions file's breakdown);
each family knows which of its ``build_info.json`` fields are worth a reader's eye (MMIU's
shortcut gate, VL-ICL's leakage, MMNeedle's twins and duplicate pictures, MULTI's near
duplicates and OCR) and hands them over as :class:`ReportTable` objects, like a cleanvision
issue manager hands its findings to the report that lists them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class IntervalRow:
    """A rate with its interval, drawn as a point with error bars beside its reference (a
    blind rule's accuracy and chance, say)."""

    label: str
    rate: float
    low: float
    high: float
    reference: float | None = None


@dataclass(frozen=True)
class ReportTable:
    """One check of a build: a title, a header, its rows and a sentence on how to read it;
    ``intervals`` (optional) are drawn as a chart beside the table."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    note: str = ""
    intervals: tuple[IntervalRow, ...] = ()
    reference_label: str = "chance"
    interval_label: str = "95% Wilson interval"
