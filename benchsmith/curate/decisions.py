"""The decision log: one row per sample and stage, the audit trail of a curated dataset.

Stages run in a fixed order over the samples still kept; each stage records a ``keep`` or
``drop`` (with a reason code and JSON evidence) for every sample it saw, so
``decisions.parquet`` answers "why is this sample here, or not" for every source row.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

DECISIONS_SCHEMA = pa.schema(
    [
        ("sample_id", pa.string()),
        ("stage", pa.string()),
        ("action", pa.string()),
        ("reason", pa.string()),
        ("evidence", pa.string()),
    ]
)


@dataclass
class DecisionLog:
    """Ordered decisions plus the set of samples still kept."""

    order: list[str]
    kept: set[str] = field(default_factory=set)
    rows: list[dict[str, Any]] = field(default_factory=list)
    stages: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, sample_ids: Iterable[str]) -> DecisionLog:
        order = list(sample_ids)
        return cls(order=order, kept=set(order))

    def alive(self) -> list[str]:
        """Samples still kept, in dataset order."""
        return [s for s in self.order if s in self.kept]

    def record(self, stage: str, decisions: Mapping[str, Any]) -> None:
        """Apply one stage: ``decisions`` maps every sample the stage saw to an object (or dict)
        with ``action``, ``reason`` and ``evidence``; samples it did not mention are kept."""
        self.stages.append(stage)
        for sample_id in self.alive():
            decision = decisions.get(sample_id)
            if decision is None:
                action, reason, evidence = "keep", None, {}
            elif isinstance(decision, dict):
                action, reason = decision["action"], decision.get("reason")
                evidence = decision.get("evidence", {})
            else:
                action, reason, evidence = decision.action, decision.reason, decision.evidence
            if action not in ("keep", "drop"):
                raise ValueError(f"stage {stage}: action must be keep or drop, got {action!r}")
            self.rows.append(
                {
                    "sample_id": sample_id,
                    "stage": stage,
                    "action": action,
                    "reason": reason,
                    "evidence": json.dumps(evidence, sort_keys=True, ensure_ascii=False),
                }
            )
            if action == "drop":
                self.kept.discard(sample_id)

    def table(self) -> pa.Table:
        return pa.Table.from_pylist(self.rows, schema=DECISIONS_SCHEMA)

    def for_sample(self, sample_id: str) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["sample_id"] == sample_id]

    def stage_counts(self) -> list[dict[str, Any]]:
        """Per stage, in run order: see :meth:`stage_count`."""
        return [self.stage_count(stage) for stage in self.stages]

    def stage_count(self, stage: str) -> dict[str, Any]:
        """One stage's samples in, kept, dropped, and dropped/flagged by reason."""
        rows = [r for r in self.rows if r["stage"] == stage]
        reasons = Counter(f"{r['action']}:{r['reason']}" for r in rows if r["reason"])
        return {
            "stage": stage,
            "in": len(rows),
            "kept": sum(r["action"] == "keep" for r in rows),
            "dropped": sum(r["action"] == "drop" for r in rows),
            "reasons": dict(sorted(reasons.items())),
        }
