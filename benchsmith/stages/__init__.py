"""Benchmark-agnostic curation stages, one file each; ``STAGES`` is the registry, in run order.

Each stage sees only the samples the earlier ones kept (so no LLM call is spent on a sample
already dropped) and is skipped when it has nothing to work with. Adding a stage is one file
here and one line below; its settings, reason codes, CLI flags and card section live with it.
"""

from benchsmith.core.registry import Entry, Registry

STAGES = Registry(
    "curation stage",
    Entry("difficulty", "benchsmith.stages.difficulty", "DIFFICULTY"),
    Entry("zero_pass_review", "benchsmith.stages.review", "REVIEW"),
    Entry("text_only", "benchsmith.stages.text_only", "TEXT_ONLY"),
    Entry("blind_baselines", "benchsmith.stages.blind_baselines", "BLIND_BASELINES"),
    Entry("image_duplicates", "benchsmith.stages.image_duplicates", "IMAGE_DUPLICATES"),
    Entry("ngram_overlap", "benchsmith.stages.ngram_overlap", "NGRAM_OVERLAP"),
    Entry("final_draw", "benchsmith.stages.final_draw", "FINAL_DRAW"),
)
