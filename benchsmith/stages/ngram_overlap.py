"""Stage ``ngram_overlap``: questions sharing word n-grams with a reference corpus.

Decontamination the other way round (datatrove's n-gram decontamination filters a training
set; this filters the benchmark): the corpus is indexed once as hashed word n-grams
(:mod:`.ngram_index`) and a question with at least ``min_matches`` of its n-grams in it is
dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.core.settings import setting
from benchsmith.stages.base import Stage, StageContext, StageDecision, StageResult


@dataclass(frozen=True)
class NgramSettings:
    corpus: tuple[Path, ...] = setting(
        (), "reference corpus files: .txt (a document each) or .jsonl, optionally .gz",
        flag_name="--reference-corpus", metavar="FILE",
    )  # fmt: skip
    n: int = setting(8, "n of the word n-grams", minimum=1, flag_name="--ngram")
    min_matches: int = setting(1, "shared n-grams that make a match", minimum=1, flag=False)
    text_field: str = setting("text", "the field of a .jsonl record that holds the text",
                              flag=False)  # fmt: skip


class NgramOverlapStage(Stage):
    name = "ngram_overlap"
    title = "Decontamination"
    summary = "word n-gram overlap with --reference-corpus files (decontamination)."
    params_key = "ngram"
    settings_type = NgramSettings
    reasons = {"NGRAM_OVERLAP": "the question shares n-grams with the reference corpus"}
    card_section = """\
## Decontamination

Questions were checked for word {{ report.n }}-grams shared with {{ report.corpus_files }} reference corpus file(s): {{ report.hits }} hit(s).
"""

    def skip_reason(
        self, samples: Sequence[Any], settings: NgramSettings, context: StageContext
    ) -> str | None:
        return None if settings.corpus else "no reference corpus"

    def run(
        self, samples: Sequence[Any], settings: NgramSettings, context: StageContext
    ) -> StageResult:
        from benchsmith.core.ngram_index import NgramIndex, find_contaminated

        index = NgramIndex.from_files(
            list(settings.corpus), settings.n, text_field=settings.text_field
        )
        hits = find_contaminated(
            {s.sample_id: s.question for s in samples}, index, min_matches=settings.min_matches
        )
        decisions = {
            sid: StageDecision(sid, "drop", "NGRAM_OVERLAP", vars(result))
            for sid, result in hits.items()
        }
        report = {"n": settings.n, "corpus_files": len(settings.corpus), "hits": len(hits)}
        return StageResult(decisions, report)


NGRAM_OVERLAP = NgramOverlapStage()
