"""MMNeedle's checks in ``benchsmith report``: twin pictures set aside before the plan, and
the plan's and the pixel re-check's counts per sample config (all zero in canonical order)."""

from __future__ import annotations

from typing import Any

from benchsmith.family.report_table import ReportTable


def report_checks(info: dict[str, Any]) -> list[ReportTable]:
    tables = []
    twins = info.get("twins") or {}
    if twins:
        tables.append(ReportTable(
            "Twin pictures (one COCO picture under several ids)",
            ("twin groups", "images set aside", "near threshold (bits)"),
            ((twins.get("twin_groups", 0), twins.get("images_set_aside", 0),
              twins.get("near_threshold")),),
            "Found by `build mmneedle twins` before the plan; the canonical plan keeps one image "
            "of each group, so no haystack shows a picture twice.",
        ))  # fmt: skip
    qa, checked = info.get("qa") or {}, (info.get("image_check") or {}).get("configs") or {}
    if qa or checked:
        rows = []
        for config in sorted(set(qa) | set(checked)):
            q, c = qa.get(config, {}), checked.get(config, {})
            rows.append((config, q.get("samples", c.get("total", 0)),
                         q.get("haystacks_with_duplicate_image", 0),
                         q.get("ambiguous_gold_answers", 0), q.get("samples_with_twin_needle", 0),
                         c.get("with_exact_duplicate", 0), c.get("with_near_duplicate_only", 0)))  # fmt: skip
        tables.append(ReportTable(
            "Haystack checks per sample config",
            ("config", "samples", "duplicate ids", "ambiguous gold", "twin needle",
             "same pixels", "near duplicate"),
            tuple(rows),
            "The plan's QA (ids) and `build mmneedle check-images` (pixels): every count should "
            "be 0 in canonical order; legacy order reports the original's.",
        ))  # fmt: skip
    return tables


def check_metrics(info: dict[str, Any]) -> dict[str, float]:
    """Twin images set aside by the plan; twin groups and haystacks with a duplicate picture
    found by the pixel checks (0 after a canonical plan)."""
    checked = (info.get("image_check") or {}).get("configs") or {}
    haystacks = sum(c.get("with_exact_duplicate", 0) + c.get("with_near_duplicate_only", 0)
                    for c in checked.values())  # fmt: skip
    return {"removed": (info.get("stats") or {}).get("twin_images_set_aside", 0),
            "duplicates": (info.get("twins") or {}).get("twin_groups", 0) + haystacks}  # fmt: skip
