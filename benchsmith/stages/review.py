"""Stage ``zero_pass_review``: samples no judge solved - broken answer key, or just hard?

LIME §2 step 3. Zero-pass samples (set by the difficulty stage) are reviewed by an LLM that
sees the image(s), the question and the gold answer and must end with a YES/NO verdict, and/or
by human verdicts from ``annotations/``; a human verdict overrides the model. The review itself
is in :mod:`.review_checks`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.core.settings import setting
from benchsmith.stages.base import Stage, StageContext, StageResult, log_llm_stats


@dataclass(frozen=True)
class ReviewSettings:
    model: str | None = setting(
        None, "model for the zero-pass YES/NO check (null: no LLM review; kept unless a human "
        "rejects)", flag_name="--review-model", metavar="MODEL",
    )  # fmt: skip
    detail: str = setting(
        "high", "image detail sent to the reviewer (the original used low)",
        choices=("low", "high", "auto"), flag_name="--review-detail",
    )  # fmt: skip
    human_verdicts: Path | None = setting(
        None, "human verdicts (.jsonl/.csv or a folder of them)", metavar="FILE"
    )


class ReviewStage(Stage):
    name = "zero_pass_review"
    title = "Review of zero-pass samples"
    summary = (
        "samples no judge solved: LLM YES/NO check with the image (--review-model) and/or "
        "human verdicts (--human-verdicts annotations/FILE.jsonl)."
    )
    params_key = "review"
    settings_type = ReviewSettings
    reasons = {
        "ZERO_PASS_LLM_REJECT": "no judge solved it and the review model said the gold answer "
        "is wrong",
        "ZERO_PASS_PARSE_FAIL": "no judge solved it and the review reply had no YES/NO verdict",
        "ZERO_PASS_LLM_ERROR": "no judge solved it and the review call failed: undecided, kept "
        "(curate publishes only with --publish-undecided; rerun to retry)",
        "ZERO_PASS_HUMAN_REJECT": "no judge solved it and a human reviewer rejected it",
    }
    undecided_reasons = frozenset({"ZERO_PASS_LLM_ERROR"})
    card_section = """\
## Review of zero-pass samples

{{ report.reviewed }} samples no judge solved were reviewed{% if report.model %} by `{{ report.model }}` (image detail `{{ settings.detail }}`; a reply without a YES/NO verdict rejects the sample){% endif %}{% if report.human_verdicts is not none %}{{ ";" if report.model else "" }} by human reviewers: {{ report.human_verdicts }} verdict(s) given{% if report.model %}, each overriding the model{% endif %}; a sample without one is kept{% endif %}.
"""

    @staticmethod
    def zero_pass(samples: Sequence[Any], context: StageContext) -> set[str]:
        return {
            s.sample_id
            for s in samples
            if context.difficulty.get(s.sample_id, ("",))[0] == "zero_pass"
        }

    def skip_reason(
        self, samples: Sequence[Any], settings: ReviewSettings, context: StageContext
    ) -> str | None:
        if not self.zero_pass(samples, context):
            return "no zero-pass samples"
        return None if settings.model or settings.human_verdicts else "no reviewer set"

    def run(
        self, samples: Sequence[Any], settings: ReviewSettings, context: StageContext
    ) -> StageResult:
        from benchsmith.stages.review_checks import (
            ReviewConfig,
            apply_human_verdicts,
            read_human_verdicts,
            review_zero_pass,
        )

        reviewed = context.samples_with_images(self.zero_pass(samples, context))
        decisions: dict[str, Any] = {}
        report: dict[str, Any] = {
            "reviewed": len(reviewed),
            "model": settings.model,
            "human_verdicts": None,  # None: no human review; else the verdicts applied
        }
        if settings.model:
            client = context.llm_client(settings.model)
            config = ReviewConfig(model=settings.model, detail=settings.detail)
            decisions = dict(review_zero_pass(reviewed, client, config))
            log_llm_stats(self.name, {settings.model: client.stats})
        if settings.human_verdicts:
            ids = {s.sample_id for s in reviewed}
            verdicts = read_human_verdicts(settings.human_verdicts)
            verdicts = {k: v for k, v in verdicts.items() if k in ids}
            decisions = dict(apply_human_verdicts(decisions, verdicts))
            report["human_verdicts"] = len(verdicts)
        return StageResult(decisions, report)


REVIEW = ReviewStage()
