"""VL-ICL's checks in ``benchsmith report``: support/query leakage and what it removed."""

from __future__ import annotations

from typing import Any

from benchsmith.family.report_table import ReportTable


def report_checks(info: dict[str, Any]) -> list[ReportTable]:
    tables = []
    summary = (info.get("leakage") or {}).get("summary") or {}
    if summary:
        episodes = summary.get("revealing_episodes") or {}
        tables.append(ReportTable(
            "Support/query leakage",
            ("exact pairs", "near pairs", "shared classes", "cross-task duplicates",
             "revealing episodes", "queries removed"),
            ((summary.get("exact_pairs", 0), summary.get("near_pairs", 0),
              summary.get("shared_classes", 0), summary.get("cross_task_duplicates", 0),
              sum(episodes.values()) if isinstance(episodes, dict) else episodes,
              summary.get("removed_queries", 0)),),
            "Pixel sha256 and pHash between each task's support and query images, shared "
            f"classes and operator expressions (threshold "
            f"{(info.get('leakage') or {}).get('image_threshold')} bits); leaking queries are "
            "removed before publishing.",
        ))  # fmt: skip
    counts = info.get("counts") or {}
    if counts:
        rows = tuple((task, c.get("query", {}).get("built", 0), c.get("query", {}).get("removed", 0),
                      c.get("query", {}).get("published", 0), c.get("support", {}).get("published", 0))
                     for task, c in sorted(counts.items()))  # fmt: skip
        tables.append(ReportTable("Queries and support per task",
                                  ("task", "queries built", "removed", "queries published",
                                   "support published"), rows))  # fmt: skip
    return tables


def check_metrics(info: dict[str, Any]) -> dict[str, float]:
    """Leaking queries removed; exact, near and cross-task duplicate pairs found."""
    summary = (info.get("leakage") or {}).get("summary") or {}
    return {"removed": summary.get("removed_queries", 0),
            "duplicates": summary.get("exact_pairs", 0) + summary.get("near_pairs", 0)
            + summary.get("cross_task_duplicates", 0)}  # fmt: skip
