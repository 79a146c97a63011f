"""Run the curation stages (``STAGES``, in order) over one config and split of a dataset.

A stage sees only the samples the earlier stages kept (so no LLM call is spent on a sample
already dropped) and is skipped when it has nothing to work with (its ``skip_reason``). Every
run with the same inputs, settings and seed gives the same decisions. The executor knows no
stage by name: what a stage needs besides its samples and settings comes through the
:class:`~benchsmith.stages.base.StageContext` (the dataset view, the scoring rule, the LLM
client, the difficulty bins).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.core.errors import SourceError
from benchsmith.core.hashing import sha256_file
from benchsmith.core.progress import log
from benchsmith.curate.config import CurateConfig
from benchsmith.curate.decisions import DecisionLog
from benchsmith.curate.kind import rows_family
from benchsmith.hf.dataset_view import DatasetView, SampleView
from benchsmith.stages import STAGES
from benchsmith.stages.base import StageContext
from benchsmith.stages.scoring_rule import ScoringRule, build_scoring_rule


@dataclass
class CurationResult:
    log: DecisionLog
    difficulty: dict[str, tuple[str, int]]  # sample_id -> (difficulty, n_correct)
    reports: dict[str, Any] = field(default_factory=dict)
    skipped_stages: dict[str, str] = field(default_factory=dict)  # stage -> why
    inputs: dict[str, str] = field(default_factory=dict)  # input file -> sha256
    undecided: dict[str, str] = field(default_factory=dict)  # kept sample -> undecided reason

    def kept(self) -> set[str]:
        return set(self.log.kept)

    def metrics(self) -> dict[str, Any]:
        """Counts for ``dvc metrics``: rows in and kept, undecided, dropped by reason code
        (per-stage counts are in the card and ``build_info.json``)."""
        dropped = Counter(r["reason"] for r in self.log.rows if r["action"] == "drop")
        return {
            "source": len(self.log.order),
            "kept": len(self.log.kept),
            "undecided": len(self.undecided),
            "dropped": dict(sorted(dropped.items())),
        }

    @staticmethod
    def table_metrics(per_target: dict[str, dict[str, Any]]) -> dict[str, float]:
        """Every curated folder's counts in the keys the family metrics use (``rows`` kept,
        ``configs`` curated, ``removed`` dropped), plus ``undecided``: one row in ``dvc
        metrics show``, whatever the number of targets (each folder's card has its own)."""
        return {
            "rows": sum(m["kept"] for m in per_target.values()),
            "configs": len(per_target),
            "removed": sum(sum(m["dropped"].values()) for m in per_target.values()),
            "undecided": sum(m["undecided"] for m in per_target.values()),
        }

    def undecided_counts(self) -> dict[str, int]:
        """Kept samples an LLM failure left undecided, by reason code."""
        return dict(sorted(Counter(self.undecided.values()).items()))


def read_samples(view: DatasetView) -> dict[str, SampleView]:
    """Text fields of every sample (images are read later, only where a stage needs them)."""
    samples: dict[str, SampleView] = {}
    for sample in view.iter_samples(with_images=False):
        if sample.sample_id in samples:
            raise SourceError(
                f"sample id {sample.sample_id!r} appears twice in {view.config}/{view.split}",
                path=view.dataset_dir,
                fix="pass --id-column naming a column whose values are unique",
            )
        samples[sample.sample_id] = sample
    return samples


def input_digests(config: CurateConfig) -> dict[str, str]:
    """sha256 of every input file the settings name (judge files, corpus, verdicts)."""
    paths: list[Path] = []
    for settings in config.stages.values():
        for name in ("files", "corpus"):
            paths.extend(getattr(settings, name, ()) or ())
        if getattr(settings, "human_verdicts", None):
            paths.append(settings.human_verdicts)
    digests = {}
    for path in paths:
        if not Path(path).is_file():
            raise SourceError("input file not found", path=path, fix="check the path")
        digests[Path(path).as_posix()] = sha256_file(path)
    return digests


def scoring_rule(config: CurateConfig, dataset_dir: Path) -> ScoringRule:
    """The run's one scoring rule, for every stage that scores a reply (judges and text-only
    models must agree on what "right" means, and agree with ``benchsmith score``)."""
    from benchsmith.stages.difficulty_bins import DifficultyConfig

    difficulty = config.stages["difficulty"]
    metric = DifficultyConfig(metric=difficulty.metric, cutoff=difficulty.cutoff).metric_spec()
    return build_scoring_rule(difficulty.scoring, metric, rows_family(dataset_dir))


def llm_client_factory(config: CurateConfig):
    def make(model: str):
        from benchsmith.core.llm import LLMClient, LLMConfig

        llm = config.llm
        return LLMClient(
            LLMConfig(
                model=model,
                base_url=llm.base_url,
                max_concurrency=llm.concurrency,
                cache_dir=llm.cache_dir,
                timeout_s=llm.timeout_s,
                max_retries=llm.max_retries,
                backoff_initial_s=llm.retry_wait_s,
            )
        )

    return make


def undecided_samples(decisions_log: DecisionLog) -> dict[str, str]:
    """Kept samples carrying a stage's undecided reason (a failed LLM call), with that reason.

    A sample a later stage dropped for another reason is decided (its fate does not hang on
    the failed call), so it is not listed.
    """
    codes = {code for stage in STAGES for code in stage.undecided_reasons}
    undecided: dict[str, str] = {}
    for row in decisions_log.rows:
        if row["reason"] in codes and row["sample_id"] in decisions_log.kept:
            undecided.setdefault(row["sample_id"], row["reason"])
    return undecided


def stage_line(counts: dict[str, Any]) -> str:
    """One stage's final counts (after human overrides), under the name the card and
    ``decisions.parquet`` use."""
    reasons = ", ".join(f"{code} {n}" for code, n in counts["reasons"].items())
    return (
        f"{counts['stage']}: {counts['in']} in, {counts['kept']} kept, "
        f"{counts['dropped']} dropped" + (f" ({reasons})" if reasons else "")
    )


def run_curation(view: DatasetView, config: CurateConfig) -> CurationResult:
    samples = read_samples(view)
    decisions_log = DecisionLog.start(samples)
    result = CurationResult(decisions_log, {}, inputs=input_digests(config))
    context = StageContext(view, scoring_rule(config, view.dataset_dir), llm_client_factory(config))
    for stage in STAGES:
        settings = config.of(stage)
        alive = [samples[s] for s in decisions_log.alive()]
        why = stage.skip_reason(alive, settings, context)
        if why is not None:
            result.skipped_stages[stage.name] = why
            continue
        outcome = stage.run(alive, settings, context)
        decisions_log.record(stage.name, outcome.decisions)
        result.reports[stage.name] = outcome.report
        log(stage_line(decisions_log.stage_count(stage.name)))
    result.difficulty = dict(context.difficulty)
    result.undecided = undecided_samples(decisions_log)
    log(
        f"curate {view.config}/{view.split}: {len(decisions_log.kept)} of {len(samples)} kept"
        + (f"; UNDECIDED {result.undecided_counts()}" if result.undecided else "")
    )
    return result
