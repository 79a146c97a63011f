"""MMIU's checks in ``benchsmith report``: the shortcut gate (the best blind rule per task
with its interval, beside chance), the answer letters and what the plan skipped."""

from __future__ import annotations

from typing import Any

from benchsmith.family.report_table import IntervalRow, ReportTable


def report_checks(info: dict[str, Any]) -> list[ReportTable]:
    tables = []
    gate = info.get("shortcuts") or {}
    if gate.get("tasks"):
        rows, intervals = [], []
        for task, r in sorted(gate["tasks"].items()):
            best = next((x for x in r.get("rules", []) if x["name"] == r["best_rule"]), None)
            accuracy = best["accuracy"] if best else r["chance"] + r["best_lift"]
            low, high = r.get("best_interval") or (accuracy, accuracy)
            verdict = (
                "allowed" if r.get("allowed") else ("FAILS" if r.get("failing_rules") else "passes")
            )
            rows.append((task, r.get("items"), f"{r['chance']:.3f}", r["best_rule"],
                         f"{accuracy:.3f} [{low:.3f}, {high:.3f}]", f"{r['best_lift']:+.3f}", verdict))  # fmt: skip
            intervals.append(IntervalRow(task, accuracy, low, high, r["chance"]))
        settings = gate.get("gate") or {}
        tables.append(ReportTable(
            "Shortcut gate: items answered without the skill",
            ("task", "items", "chance", "best blind rule", "its accuracy [interval]", "lift",
             "verdict"),
            tuple(rows),
            "Option-only, image, position and recurrence rules answer every item blind; a task "
            f"fails when its best rule beats chance by more than {settings.get('max_gain')} at "
            f"{settings.get('confidence')} confidence.",
            tuple(intervals), "chance",
            f"the gate's Wilson interval ({settings.get('confidence')} for the task's rules)",
        ))  # fmt: skip
        letters = []
        for task, r in sorted(gate["tasks"].items()):
            options = r.get("options") or {}
            spread = options.get("answer_letters") or {}
            letters.append((task, " ".join(f"{k}:{v}" for k, v in sorted(spread.items())),
                            options.get("answer_letter_chi_square_p"),
                            options.get("duplicate_options", 0),
                            options.get("gold_among_distractors", 0)))  # fmt: skip
        tables.append(ReportTable("Options", ("task", "gold letters", "uniform p (chi-square)",
                                              "duplicate options", "gold among distractors"),
                                  tuple(letters)))  # fmt: skip
    skips = info.get("skips") or {}
    if skips:
        rows = tuple((task, why, n) for task, reasons in sorted(skips.items())
                     for why, n in sorted(reasons.items()))  # fmt: skip
        tables.append(ReportTable("Draws the plan skipped", ("task", "reason", "count"), rows,
                                  "A draw that could not meet the task's rules is skipped and "
                                  "another drawn; the counts say how often."))  # fmt: skip
    return tables


def check_metrics(info: dict[str, Any]) -> dict[str, float]:
    """The shortcut gate's worst task (the highest best-rule lift over chance) and duplicate
    options found; MMIU removes nothing (a failing task stops the build instead)."""
    tasks = (info.get("shortcuts") or {}).get("tasks") or {}
    if not tasks:
        return {}
    return {"shortcut_lift": max(r["best_lift"] for r in tasks.values()),
            "duplicates": sum((r.get("options") or {}).get("duplicate_options", 0)
                              for r in tasks.values())}  # fmt: skip
