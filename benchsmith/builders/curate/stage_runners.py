"""Adapters from the generic stages to the curation pipeline.

Each ``run_*`` takes the samples still kept and returns ``(decisions, report)``: decisions map a
sample id to keep/drop with a reason and evidence, the report is what the card shows for the
stage. The stages themselves (``benchsmith.stages.*``) know nothing about datasets or files.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, replace
from typing import Any

from benchsmith.builders.curate.config import CurateConfig
from benchsmith.core.llm import LLMClient, LLMConfig
from benchsmith.scoring.metrics import get_metric
from benchsmith.sources.hf_dataset import DatasetView, SampleView
from benchsmith.stages.blind_baselines import (
    BlindItem,
    flagged_rules,
    resolve_answer_index,
    run_blind_baselines,
    shortcut_hits,
)
from benchsmith.stages.decision import StageDecision
from benchsmith.stages.difficulty import DifficultyConfig, assign_difficulty
from benchsmith.stages.duplicate_images import (
    duplicates_across,
    duplicates_within,
    duplicates_within_samples,
)
from benchsmith.stages.image_hashes import hash_images
from benchsmith.stages.judges import read_judge_files, score_judges
from benchsmith.stages.leakage import TextOnlyConfig, check_text_only
from benchsmith.stages.ngram_overlap import NgramIndex, find_contaminated
from benchsmith.stages.stratified_draw import plan_allocations, stratified_draw
from benchsmith.stages.zero_pass_review import (
    ReviewConfig,
    apply_human_verdicts,
    read_human_verdicts,
    review_zero_pass,
)

Decisions = dict[str, Any]
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def gold_for_scoring(sample: SampleView) -> Any:
    """The gold answer as metrics expect it: an option letter for multiple choice."""
    if sample.choices:
        index = resolve_answer_index(str(sample.answer), sample.choices)
        if index is not None:
            return LETTERS[index]
    return sample.answer if isinstance(sample.answer, list) else str(sample.answer)


def correctness_scorer(metric_name: str, cutoff: float | None) -> Callable[[SampleView, str], bool]:
    spec = get_metric(metric_name)
    threshold = spec.cutoff if cutoff is None else cutoff

    def is_correct(sample: SampleView, response: str) -> bool:
        return spec.fn(response or "", gold_for_scoring(sample)) >= threshold

    return is_correct


def llm_client(config: CurateConfig, model: str) -> LLMClient:
    llm = config.llm
    return LLMClient(
        LLMConfig(
            model=model,
            base_url=llm.base_url,
            max_concurrency=llm.concurrency,
            cache_dir=llm.cache_dir,
            timeout_s=llm.timeout_s,
            max_retries=llm.max_retries,
        )
    )


def run_difficulty(
    samples: Mapping[str, SampleView], config: CurateConfig
) -> tuple[Decisions, dict[str, Any], dict[str, Any]]:
    """Judge predictions -> per-sample n_correct and difficulty; ``easy`` (by default) dropped.

    Bins are assigned per subtask, so a judge missing one subtask is only excluded there
    (``missing_policy: exclude_model``).
    """
    judges = config.judges
    table = read_judge_files(list(judges.files))
    difficulty_config = DifficultyConfig(
        bins=judges.bins,
        drop_bins=judges.drop_bins,
        missing_policy=judges.missing_policy,
        metric=judges.metric,
        cutoff=judges.cutoff,
    )
    metric = difficulty_config.metric_spec()
    golds = {sid: gold_for_scoring(s) for sid, s in samples.items()}
    scores = score_judges(
        table, golds, metric, set(samples), unknown_policy=judges.unknown_ids, cutoff=judges.cutoff
    )
    by_subtask: dict[str, list[str]] = {}
    for sid, sample in samples.items():
        by_subtask.setdefault(sample.subtask, []).append(sid)
    decisions: dict[str, Any] = {}
    for subtask in sorted(by_subtask):
        decisions.update(assign_difficulty(scores, by_subtask[subtask], difficulty_config))
    bins = Counter(d.difficulty for d in decisions.values())
    report = {
        "judges": list(scores.models),
        "metric": metric.name,
        "cutoff": scores.cutoff,
        "edges": difficulty_config.edges().as_dict(),
        "bins": dict(sorted(bins.items())),
        "counters": dict(scores.counters),
    }
    return decisions, report, {sid: (d.difficulty, d.n_correct) for sid, d in decisions.items()}


def run_review(
    samples: Sequence[SampleView], config: CurateConfig
) -> tuple[Decisions, dict[str, Any]]:
    """Zero-pass samples: LLM YES/NO check with the image, then human verdicts override."""
    review = config.review
    decisions: Decisions = {}
    report: dict[str, Any] = {"reviewed": len(samples), "model": review.model}
    if review.model:
        client = llm_client(config, review.model)
        decisions = dict(
            review_zero_pass(
                samples, client, ReviewConfig(model=review.model, detail=review.detail)
            )
        )
        report["llm"] = dict(client.stats)
    if review.human_verdicts:
        verdicts = read_human_verdicts(review.human_verdicts)
        verdicts = {k: v for k, v in verdicts.items() if k in {s.sample_id for s in samples}}
        decisions = dict(apply_human_verdicts(decisions, verdicts))
        report["human_verdicts"] = len(verdicts)
    return decisions, report


def run_text_only(
    samples: Sequence[SampleView], config: CurateConfig
) -> tuple[Decisions, dict[str, Any]]:
    settings = config.text_only
    clients = {model: llm_client(config, model) for model in settings.models}
    decisions = check_text_only(
        samples,
        clients,
        correctness_scorer(config.judges.metric, config.judges.cutoff),
        TextOnlyConfig(
            models=settings.models,
            max_text_only_correct=settings.max_text_only_correct,
            max_tokens=settings.max_tokens,
        ),
    )
    report = {
        "models": list(settings.models),
        "max_text_only_correct": settings.max_text_only_correct,
        "llm": {m: dict(c.stats) for m, c in clients.items()},
    }
    return dict(decisions), report


def blind_item(sample: SampleView) -> BlindItem:
    answer = (
        sample.answer[0] if isinstance(sample.answer, list) and sample.answer else sample.answer
    )
    index = resolve_answer_index(str(answer), sample.choices) if sample.choices else None
    return BlindItem(sample.sample_id, sample.question, str(answer), sample.choices, index)


def run_blind(
    samples: Sequence[SampleView], config: CurateConfig
) -> tuple[Decisions, dict[str, Any]]:
    """Blind baselines per config; samples a flagged shortcut rule answers are dropped."""
    items = [blind_item(s) for s in samples]
    results = run_blind_baselines(items, threshold=config.blind.threshold)
    flagged = [r.name for r in results if r.flagged]
    report = {"threshold": config.blind.threshold, "baselines": [asdict(r) for r in results]}
    decisions: Decisions = {}
    rules = flagged_rules(results)
    if config.blind.drop_flagged and rules:
        hits = shortcut_hits(items, rules=rules)
        for sample_id, rules in hits.items():
            if rules:
                decisions[sample_id] = StageDecision(
                    sample_id, "drop", "BLIND_SHORTCUT", {"rules": sorted(rules)}
                )
    report["flagged"] = flagged
    return decisions, report


def _hash_view(view: DatasetView, wanted: set[str] | None, workers: int):
    """Hashes keyed by (sample id, image position); images stream through in batches."""
    items = (
        ((sample.sample_id, k), data)
        for sample in view.iter_samples(with_images=True, only=wanted)
        for k, data in enumerate(sample.images)
    )
    return hash_images(items, workers=workers)


def run_images(
    view: DatasetView, alive: Sequence[str], config: CurateConfig
) -> tuple[Decisions, dict[str, Any]]:
    """Exact and near duplicates within each sample and against the reference splits."""
    settings = config.images
    hashes, errors = _hash_view(view, set(alive), settings.workers)
    per_sample: dict[str, list] = {sid: [] for sid in alive}
    for (sid, _k), value in sorted(hashes.items()):
        per_sample[sid].append(value)
    findings = list(duplicates_within_samples(per_sample, settings.near_threshold))
    for split in settings.against_splits:
        other = DatasetView(view.dataset_dir, view.config, split, view.columns)
        reference, ref_errors = _hash_view(other, None, settings.workers)
        found = duplicates_across(hashes, reference, settings.near_threshold)
        findings.extend(replace(f, scope=f"across_splits:{split}") for f in found)
        errors.update({("reference", split, *k): v for k, v in ref_errors.items()})
    evidence: dict[str, list] = {}
    for f in findings:
        within = f.scope == "within_sample"
        sid = f.sample_id if within else f.a[0]
        evidence.setdefault(sid, []).append(
            {
                "kind": f.kind,
                "scope": f.scope,
                "image": f.a if within else f.a[1],
                "other": f.b if within else f"{f.b[0]}#{f.b[1]}",
                "distance": f.distance,
            }
        )
    decisions: Decisions = {}
    for sid, items in evidence.items():
        exact = any(i["kind"] == "exact" for i in items)
        reason = "DUPLICATE_IMAGE" if exact else "NEAR_DUPLICATE_IMAGE"
        decisions[sid] = StageDecision(sid, "drop", reason, {"findings": items})
    unreadable = 0
    for key, message in errors.items():
        if key[0] == "reference":
            continue  # an unreadable reference image cannot leak; counted in the report
        unreadable += 1
        decisions[key[0]] = StageDecision(
            key[0], "drop", "UNREADABLE_IMAGE", {"image": key[1], "error": message}
        )
    # The same picture in two samples of the split is reported, not removed: many benchmarks
    # ask several questions about one image.
    same_split = [f for f in duplicates_within(hashes, settings.near_threshold) if f.a[0] != f.b[0]]
    report = {
        "near_threshold": settings.near_threshold,
        "against_splits": list(settings.against_splits),
        "images_hashed": len(hashes),
        "unreadable": unreadable,
        "unreadable_reference": len(errors) - unreadable,
        "findings": dict(sorted(Counter(f"{f.kind}/{f.scope}" for f in findings).items())),
        "across_samples_in_split": dict(sorted(Counter(f.kind for f in same_split).items())),
    }
    return decisions, report


def run_ngram(
    samples: Sequence[SampleView], config: CurateConfig
) -> tuple[Decisions, dict[str, Any]]:
    settings = config.ngram
    index = NgramIndex.from_files(list(settings.corpus), settings.n, text_field=settings.text_field)
    hits = find_contaminated(
        {s.sample_id: s.question for s in samples}, index, min_matches=settings.min_matches
    )
    decisions = {
        sid: StageDecision(sid, "drop", "NGRAM_OVERLAP", vars(result))
        for sid, result in hits.items()
    }
    return decisions, {"n": settings.n, "corpus_files": len(settings.corpus), "hits": len(hits)}


def run_draw(
    samples: Sequence[SampleView], difficulty: Mapping[str, tuple[str, int]], config: CurateConfig
) -> tuple[Decisions, dict[str, Any]]:
    """Stratified by difficulty within each subtask; everything is kept below the target."""
    pool: dict[str, dict[str, list[str]]] = {}
    for s in samples:
        stratum = difficulty.get(s.sample_id, ("unrated", -1))[0]
        pool.setdefault(s.subtask, {}).setdefault(stratum, []).append(s.sample_id)
    chosen = stratified_draw(pool, config.target_size, config.seed)
    allocation = plan_allocations(pool, config.target_size)
    decisions = {
        s.sample_id: StageDecision(
            s.sample_id, "drop", "NOT_SAMPLED", {"subtask": s.subtask, "seed": config.seed}
        )
        for s in samples
        if s.sample_id not in chosen
    }
    return decisions, {
        "target_size": config.target_size,
        "seed": config.seed,
        "allocation": allocation,
    }
