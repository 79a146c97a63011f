"""Stage ``difficulty``: judge predictions -> n_correct -> LIME bins; easy samples dropped.

Judges' replies are scored per sample with the run's scoring rule (:mod:`.scoring_rule`: the
family's own scorer for a benchsmith dataset, else the metric and cutoff of LIME Table 8, or
LIME's legacy verdicts; see :mod:`.judges`); the number of judges that solved a sample puts it in a bin
(:mod:`.difficulty_bins`), assigned per subtask so a judge missing one subtask is only excluded
there. Bins in ``drop_bins`` (default: easy) are dropped; the bin and n_correct of every sample
go to the context for the later stages and into the curated rows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.core.settings import setting
from benchsmith.stages.base import Stage, StageContext, StageResult

METRIC_HELP = "accuracy, vqa_accuracy, anls or relaxed_accuracy (cutoffs: LIME Table 8)"


@dataclass(frozen=True)
class DifficultySettings:
    files: tuple[Path, ...] = setting(
        (), "judge prediction JSONL files", flag_name="--judges", metavar="FILE"
    )
    metric: str = setting("accuracy", METRIC_HELP, metavar="METRIC")
    cutoff: float | None = setting(
        None, "the metric's correctness cutoff (null: its default from the LIME paper's table)"
    )
    bins: str = setting("paper", "bin edges preset", choices=("paper", "code"))
    drop_bins: tuple[str, ...] = setting(("easy",), "the bins dropped", flag=False)
    missing_policy: str = setting(
        "error", "what a missing judge prediction does",
        choices=("error", "treat_wrong", "exclude_model"),
    )  # fmt: skip
    unknown_ids: str = setting(
        "error", "what a judge row for a sample id the dataset lacks does (error, or count and "
        "skip)", choices=("error", "ignore"),
    )  # fmt: skip
    scoring: str = setting(
        "auto", "auto: a benchsmith dataset's replies are scored by its family's scorer (as "
        "`benchsmith score` does), any other dataset's by the metric; lime-legacy: LIME's own "
        "per-subtask verdicts (lmms-eval as LIME ran it)",
        choices=("auto", "lime-legacy"), flag_name="--judge-scoring",
    )  # fmt: skip


class DifficultyStage(Stage):
    name = "difficulty"
    title = "Difficulty"
    summary = (
        "judge predictions (--judges) -> n_correct -> easy / middle / hard / zero_pass; easy "
        "dropped (LIME). Metric and cutoff from the LIME paper's table."
    )
    params_key = "judges"
    settings_type = DifficultySettings
    reasons = {
        "EASY": "solved by at least the 'easy' number of judges (dropped by default)",
        "MIDDLE": "solved by a middle number of judges (dropped only if listed in drop_bins)",
        "HARD": "solved by one or two judges (dropped only if listed in drop_bins)",
        "ZERO_PASS": "solved by no judge (dropped only if listed in drop_bins)",
        "MISSING_PREDICTION": "a judge has no prediction for the sample (missing_policy decides)",
    }
    card_section = """\
## Difficulty

Judges: {{ report.judges | join(", ") }}. Replies scored with `{{ report.metric }}`; a judge
solves a sample when its score is >= {{ report.cutoff }}. Bins (`{{ settings.bins }}` edges):
{% for b, n in report.bins.items() %}{{ b }} {{ n }}{% if not loop.last %}, {% endif %}{% endfor %}.
Dropped bins: {{ settings.drop_bins | join(", ") }}. Missing predictions: `{{ settings.missing_policy }}`.
"""

    def skip_reason(
        self, samples: Sequence[Any], settings: DifficultySettings, context: StageContext
    ) -> str | None:
        return None if settings.files else "no judge prediction files"

    def run(
        self, samples: Sequence[Any], settings: DifficultySettings, context: StageContext
    ) -> StageResult:
        from benchsmith.stages.difficulty_bins import DifficultyConfig, assign_difficulty
        from benchsmith.stages.judges import read_judge_files, score_judges

        table = read_judge_files(list(settings.files))
        config = DifficultyConfig(
            bins=settings.bins,
            drop_bins=settings.drop_bins,
            missing_policy=settings.missing_policy,
            metric=settings.metric,
            cutoff=settings.cutoff,
        )
        rule = context.scoring
        golds = {s.sample_id: rule.gold_for(s) for s in samples}
        scores = score_judges(
            table, golds, rule.spec, set(golds), unknown_policy=settings.unknown_ids
        )
        by_subtask: dict[str, list[str]] = {}
        for sample in samples:
            by_subtask.setdefault(sample.subtask, []).append(sample.sample_id)
        decisions: dict[str, Any] = {}
        for subtask in sorted(by_subtask):
            decisions.update(assign_difficulty(scores, by_subtask[subtask], config))
        context.difficulty.update({s: (d.difficulty, d.n_correct) for s, d in decisions.items()})
        report = {
            "judges": list(scores.models),
            "metric": rule.name,
            "cutoff": scores.cutoff,
            "edges": config.edges().as_dict(),
            "bins": dict(sorted(Counter(d.difficulty for d in decisions.values()).items())),
            "counters": dict(scores.counters),
        }
        return StageResult(decisions, report)


def gold_for_scoring(sample: Any) -> Any:
    """The gold answer as metrics expect it: an option letter for multiple choice."""
    from benchsmith.options.blind_rules import resolve_answer_index

    if sample.choices:
        index = resolve_answer_index(str(sample.answer), sample.choices)
        if index is not None:
            return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[index]
    return sample.answer if isinstance(sample.answer, list) else str(sample.answer)


DIFFICULTY = DifficultyStage()
