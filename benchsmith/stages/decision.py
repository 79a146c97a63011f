"""The decision a curation stage takes about one sample (datatrove's filter-with-reason model).

Every stage returns one :class:`StageDecision` per sample it looked at, so a removed sample
always has a reason code and the evidence behind it (model names, responses, cache keys,
reviewer), and kept samples can carry evidence too (a human override, an undecidable check).
``evidence`` must be JSON-serialisable: provenance stores it as a JSON string.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Action = Literal["keep", "drop"]


@dataclass(frozen=True)
class StageDecision:
    sample_id: str
    action: Action
    reason: str | None
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def kept(self) -> bool:
        return self.action == "keep"


def count_reasons(decisions: Mapping[str, StageDecision]) -> dict[str, int]:
    """``{"keep": n, "drop": m, REASON: k, ...}``, for the counted-and-reported summaries."""
    counts: Counter[str] = Counter()
    for decision in decisions.values():
        counts[decision.action] += 1
        if decision.reason:
            counts[decision.reason] += 1
    return dict(sorted(counts.items()))
