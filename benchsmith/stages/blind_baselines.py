"""Stage ``blind_baselines``: how well the config is answered without the image (or the model).

The answer prior, the option-shortcut rules of :mod:`.blind_rules` and the cross-item baselines
(option recurrence across samples, a learned options-only model scored on held-out samples) are
scored against chance over the samples still kept; a rule that beats chance by more than ``threshold`` is flagged, and
(with ``drop_flagged``) the samples a flagged option rule singles out are dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from benchsmith.core.settings import setting
from benchsmith.stages.base import Stage, StageContext, StageDecision, StageResult


@dataclass(frozen=True)
class BlindSettings:
    enabled: bool = setting(True, "run the blind baselines", flag_name="--no-blind",
                            off_switch=True)  # fmt: skip
    threshold: float = setting(0.10, "flag a rule whose accuracy beats chance by more than this",
                               minimum=0, flag_name="--blind-threshold")  # fmt: skip
    drop_flagged: bool = setting(
        True, "drop the samples a flagged option rule singles out", flag=False
    )


def blind_item(sample: Any) -> Any:
    from benchsmith.options.blind_rules import BlindItem, resolve_answer_index

    answer = (
        sample.answer[0] if isinstance(sample.answer, list) and sample.answer else sample.answer
    )
    index = resolve_answer_index(str(answer), sample.choices) if sample.choices else None
    if index is None and sample.choices and is_letter_set(str(answer), len(sample.choices)):
        # several correct letters (MULTI's MA "ACE"): no single option to single out, so the
        # option rules do not apply; the sample is judged like an open question
        return BlindItem(sample.sample_id, sample.question, str(answer), None, None)
    return BlindItem(sample.sample_id, sample.question, str(answer), sample.choices, index)


def is_letter_set(answer: str, n_options: int) -> bool:
    """``ACE``: two or more distinct option letters, each naming an option."""
    letters = answer.strip()
    return (len(letters) >= 2 and letters.isalpha() and letters.isupper()
            and len(set(letters)) == len(letters)
            and all(ord(c) - 65 < n_options for c in letters))  # fmt: skip


class BlindBaselinesStage(Stage):
    name = "blind_baselines"
    title = "Blind baselines"
    summary = (
        "answer prior, option shortcuts (longest option, unique format, ...) and cross-item "
        "baselines (option recurrence, a learned options-only model); report blind accuracy "
        "vs chance; drop samples a flagged per-sample rule answers."
    )
    params_key = "blind"
    settings_type = BlindSettings
    reasons = {
        "BLIND_SHORTCUT": "a blind rule that beats chance on this config singles out its answer",
    }
    card_section = """\
## Blind baselines

Accuracy of answering without the image *or* the model, against chance. A rule is flagged when it
beats chance by more than {{ report.threshold }}{% if settings.drop_flagged %}; samples a flagged option rule answers are removed{% endif %}.

| baseline | n | accuracy | chance | coverage | flagged |
|---|---|---|---|---|---|
{% for b in report.baselines -%}
| `{{ b.name }}` | {{ b.n }} | {{ "%.3f" | format(b.accuracy) }} | {{ "%.3f" | format(b.chance) }} | {{ "%.3f" | format(b.coverage) }} | {{ "yes" if b.flagged else "no" }} |
{% endfor %}
{% for name, outcome in report.outcomes.items() %}
- `{{ name }}` flagged: {{ outcome }}{% else %}
No rule beats chance by more than the threshold: nothing was removed.{% endfor %}
"""

    def skip_reason(
        self, samples: Sequence[Any], settings: BlindSettings, context: StageContext
    ) -> str | None:
        return None if settings.enabled else "disabled"

    def run(
        self, samples: Sequence[Any], settings: BlindSettings, context: StageContext
    ) -> StageResult:
        from benchsmith.options.blind_rules import flagged_rules, run_blind_baselines, shortcut_hits

        items = [blind_item(s) for s in samples]
        results = run_blind_baselines(items, threshold=settings.threshold)
        report: dict[str, Any] = {
            "threshold": settings.threshold,
            "baselines": [asdict(r) for r in results],
        }
        decisions: dict[str, StageDecision] = {}
        rules = flagged_rules(results)
        if settings.drop_flagged and rules:
            for sample_id, hit in shortcut_hits(items, rules=rules).items():
                if hit:
                    decisions[sample_id] = StageDecision(
                        sample_id, "drop", "BLIND_SHORTCUT", {"rules": sorted(hit)}
                    )
        report["flagged"] = [r.name for r in results if r.flagged]
        report["outcomes"] = flag_outcomes(report["flagged"], decisions, settings.drop_flagged)
        return StageResult(decisions, report)


def flag_outcomes(
    flagged: Sequence[str], decisions: dict[str, StageDecision], drop_flagged: bool
) -> dict[str, str]:
    """What a flag did, per flagged baseline, in words for the card: a flag that removed
    nothing says why, so "flagged" never reads as an unexplained warning."""
    from benchsmith.options.blind_rules import CROSS_ITEM_RULES, OPTION_RULES

    outcomes = {}
    for name in flagged:
        removed = sum(name in d.evidence["rules"] for d in decisions.values())
        if name in CROSS_ITEM_RULES:
            outcomes[name] = (
                "a signal across the config's options (recurrence, or features a model learns "
                "on other items), not a rule one sample can be dropped for: rebuild the "
                "distractors at the source"
            )
        elif name not in OPTION_RULES:
            outcomes[name] = (
                "a bias of the whole config (its answer distribution), not of single samples, "
                "so no sample is removed for it; rebalance the answers at the source"
            )
        elif not drop_flagged:
            outcomes[name] = "reported only (`curate.blind.drop_flagged: false`)"
        else:
            outcomes[name] = f"{removed} sample(s) whose answer it picks were removed"
    return outcomes


BLIND_BASELINES = BlindBaselinesStage()
