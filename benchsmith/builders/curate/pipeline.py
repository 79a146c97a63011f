"""Run the curation stages in order over one config and split of a dataset.

Order (LIME's, extended): difficulty -> zero-pass review -> text-only answerability -> blind
baselines -> image duplicates -> n-gram overlap -> final draw. A stage sees only the samples
the earlier stages kept (so no LLM call is spent on a sample already dropped) and is skipped
when it has nothing to work with (no judge files, no text-only models, no corpus). Every run
with the same inputs, settings and seed gives the same decisions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.builders.curate import stage_runners as runners
from benchsmith.builders.curate.config import STAGE_ORDER, CurateConfig
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

    def zero_pass() -> set[str]:
        return {
            s.sample_id
            for s in alive()
            if result.difficulty.get(s.sample_id, ("",))[0] == "zero_pass"
        }

    def difficulty() -> tuple[dict, dict]:
        decisions, report, result.difficulty = runners.run_difficulty(samples, config)
        return decisions, report

    def why_no_review() -> str | None:
        if not zero_pass():
            return "no zero-pass samples"
        return None if config.review.model or config.review.human_verdicts else "no reviewer set"

    def why_no_image_check() -> str | None:
        if view.columns.image is None and view.columns.image_join is None:
            return "no image column"
        return None if config.images.enabled else "disabled"

    # (stage, why it is skipped or None, how it runs): evaluated in order, each on the survivors
    steps: list[tuple[str, Callable[[], str | None], Callable[[], tuple[dict, dict]]]] = [
        (
            "difficulty",
            lambda: None if config.judges.files else "no judge prediction files",
            difficulty,
        ),
        (
            "zero_pass_review",
            why_no_review,
            lambda: runners.run_review(with_images(view, zero_pass()), config),
        ),
        (
            "text_only",
            lambda: None if config.text_only.models else "no text-only models",
            lambda: runners.run_text_only(alive(), config),
        ),
        (
            "blind_baselines",
            lambda: None if config.blind.enabled else "disabled",
            lambda: runners.run_blind(alive(), config),
        ),
        (
            "image_duplicates",
            why_no_image_check,
            lambda: runners.run_images(view, decisions_log.alive(), config),
        ),
        (
            "ngram_overlap",
            lambda: None if config.ngram.corpus else "no reference corpus",
            lambda: runners.run_ngram(alive(), config),
        ),
        (
            "final_draw",
            lambda: (
                None if config.target_size is not None else "no target size (every survivor kept)"
            ),
            lambda: runners.run_draw(alive(), result.difficulty, config),
        ),
    ]
    assert [step[0] for step in steps] == list(STAGE_ORDER)
    for stage, why_skipped, run in steps:
        why = why_skipped()
        if why is not None:
            result.skipped_stages[stage] = why
            continue
        decisions, report = run()
        decisions_log.record(stage, decisions)
        result.reports[stage] = report

    counts = Counter(r["reason"] for r in decisions_log.rows if r["action"] == "drop")
    log(
        f"curate {view.config}/{view.split}: {len(decisions_log.kept)} of {len(samples)} kept"
        + (f"; dropped {dict(sorted(counts.items()))}" if counts else "")
    )
    return result
