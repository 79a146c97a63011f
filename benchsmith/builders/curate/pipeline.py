"""Run the curation stages in order over one config and split of a dataset.

Order (LIME's, extended): difficulty -> zero-pass review -> text-only answerability -> blind
baselines -> image duplicates -> n-gram overlap -> final draw. A stage sees only the samples
the earlier stages kept (so no LLM call is spent on a sample already dropped) and is skipped
when it has nothing to work with (no judge files, no text-only models, no corpus). Every run
with the same inputs, settings and seed gives the same decisions.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.builders.curate import stage_runners as runners
from benchsmith.builders.curate.config import CurateConfig
from benchsmith.builders.curate.decisions import DecisionLog
from benchsmith.core.errors import SourceError
from benchsmith.core.hashing import sha256_file
from benchsmith.core.progress import log
from benchsmith.sources.hf_dataset import DatasetView, SampleView


@dataclass
class CurationResult:
    log: DecisionLog
    difficulty: dict[str, tuple[str, int]]  # sample_id -> (difficulty, n_correct)
    reports: dict[str, Any] = field(default_factory=dict)
    skipped_stages: dict[str, str] = field(default_factory=dict)  # stage -> why
    inputs: dict[str, str] = field(default_factory=dict)  # input file -> sha256

    def kept(self) -> set[str]:
        return set(self.log.kept)


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


def with_images(view: DatasetView, wanted: set[str]) -> list[SampleView]:
    return list(view.iter_samples(with_images=True, only=wanted))


def input_digests(config: CurateConfig) -> dict[str, str]:
    paths = [*config.judges.files, *config.ngram.corpus]
    if config.review.human_verdicts:
        paths.append(config.review.human_verdicts)
    digests = {}
    for path in paths:
        if not Path(path).is_file():
            raise SourceError("input file not found", path=path, fix="check the path")
        digests[Path(path).as_posix()] = sha256_file(path)
    return digests


def run_curation(view: DatasetView, config: CurateConfig) -> CurationResult:
    samples = read_samples(view)
    result = CurationResult(
        log=DecisionLog.start(samples), difficulty={}, inputs=input_digests(config)
    )
    decisions_log = result.log

    def alive() -> list[SampleView]:
        return [samples[s] for s in decisions_log.alive()]

    def skip(stage: str, why: str) -> None:
        result.skipped_stages[stage] = why

    if config.judges.files:
        decisions, report, difficulty = runners.run_difficulty(samples, config)
        result.difficulty = difficulty
        decisions_log.record("difficulty", decisions)
        result.reports["difficulty"] = report
    else:
        skip("difficulty", "no judge prediction files")

    zero_pass = [
        s.sample_id for s in alive() if result.difficulty.get(s.sample_id, ("",))[0] == "zero_pass"
    ]
    if zero_pass and (config.review.model or config.review.human_verdicts):
        decisions, report = runners.run_review(with_images(view, set(zero_pass)), config)
        decisions_log.record("zero_pass_review", decisions)
        result.reports["zero_pass_review"] = report
    else:
        skip("zero_pass_review", "no zero-pass samples" if not zero_pass else "no reviewer set")

    if config.text_only.models:
        decisions, report = runners.run_text_only(alive(), config)
        decisions_log.record("text_only", decisions)
        result.reports["text_only"] = report
    else:
        skip("text_only", "no text-only models")

    if config.blind.enabled:
        decisions, report = runners.run_blind(alive(), config)
        decisions_log.record("blind_baselines", decisions)
        result.reports["blind_baselines"] = report
    else:
        skip("blind_baselines", "disabled")

    has_images = view.columns.image is not None or view.columns.image_join is not None
    if config.images.enabled and has_images:
        decisions, report = runners.run_images(view, decisions_log.alive(), config)
        decisions_log.record("image_duplicates", decisions)
        result.reports["image_duplicates"] = report
    else:
        skip("image_duplicates", "no image column" if not has_images else "disabled")

    if config.ngram.corpus:
        decisions, report = runners.run_ngram(alive(), config)
        decisions_log.record("ngram_overlap", decisions)
        result.reports["ngram_overlap"] = report
    else:
        skip("ngram_overlap", "no reference corpus")

    if config.target_size is not None:
        decisions, report = runners.run_draw(alive(), result.difficulty, config)
        decisions_log.record("final_draw", decisions)
        result.reports["final_draw"] = report
    else:
        skip("final_draw", "no target size (every survivor kept)")

    counts = Counter(r["reason"] for r in decisions_log.rows if r["action"] == "drop")
    log(
        f"curate {view.config}/{view.split}: {len(decisions_log.kept)} of {len(samples)} kept"
        + (f"; dropped {dict(sorted(counts.items()))}" if counts else "")
    )
    return result
