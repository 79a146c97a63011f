"""MULTI's checks in ``benchsmith report``: sources, OCR quality, near duplicates and the
Appendix D selection."""

from __future__ import annotations

from typing import Any

from benchsmith.family.report_table import ReportTable


def report_checks(info: dict[str, Any]) -> list[ReportTable]:
    tables = []
    kinds = info.get("source_kinds") or {}
    if kinds:
        tables.append(ReportTable("Problems by source", tuple(sorted(kinds)),
                                  (tuple(kinds[k] for k in sorted(kinds)),)))  # fmt: skip
    ocr = info.get("ocr") or {}
    if ocr:
        cer = ocr.get("cer") or {}
        tables.append(ReportTable(
            "OCR of scanned pages",
            ("engine", "pages", "skipped", *(f"CER {k}" for k in sorted(cer))),
            ((ocr.get("backend"), ocr.get("pages"), ocr.get("skipped"),
              *(cer[k] for k in sorted(cer))),),
            "Character error rate against the pages' answer keys, per scan variant.",
        ))  # fmt: skip
    near = info.get("near_duplicates") or {}
    if near:
        tables.append(ReportTable(
            "Near-duplicate questions",
            ("candidates", "pairs", "groups", "removed"),
            ((near.get("candidates"), near.get("pairs"), near.get("groups"), near.get("removed")),),
            "MinHash LSH over character n-grams, confirmed by Jaccard, and pHash on images; "
            "removed.jsonl in the plan lists each removal.",
        ))  # fmt: skip
    selection = info.get("selection") or {}
    if selection:
        tables.append(ReportTable("Appendix D selection of crawled problems",
                                  ("pool", "kept", "dropped", "buckets"),
                                  ((selection.get("pool"), selection.get("kept"),
                                    selection.get("dropped"), selection.get("buckets")),)))  # fmt: skip
    return tables


def check_metrics(info: dict[str, Any]) -> dict[str, float]:
    """Questions removed as near duplicates or dropped by the selection; near-duplicate pairs
    found; the OCR's worst character error rate over the scan variants."""
    near, selection = info.get("near_duplicates") or {}, info.get("selection") or {}
    metrics = {"removed": near.get("removed", 0) + selection.get("dropped", 0),
               "duplicates": near.get("pairs", 0)}  # fmt: skip
    cer = (info.get("ocr") or {}).get("cer") or {}
    if cer:
        metrics["ocr_cer"] = max(cer.values())
    return metrics
