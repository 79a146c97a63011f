"""What ``benchsmith predict`` sends and writes, and what a harness export holds, per family.

A family turns one config and split of its published folder into :class:`PredictionRequest`
items (``Family.prediction_requests``): the user turn as text and images *in order* (VL-ICL
interleaves demonstrations with their images), an optional system prompt, and the ``key``, the
fields that family's scorer reads to find the sample (``question_id`` for MULTI, ``query_id``,
``n_shot`` and ``seed`` for VL-ICL, ...). ``predict`` writes ``{**key, model, response,
cache_key}``, so what it writes is exactly what ``score`` reads. A family that needs nothing
special uses :func:`generic_requests`: the sample's images, then the question, option lines
and the lmms-eval instruction.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PredictOptions:
    text_only: bool = False
    instruction: str | None = None  # replaces a family's instruction line ("" for none)
    shots: tuple[int, ...] = ()  # VL-ICL: demonstrations per query (default: every n_shot)
    seeds: tuple[int, ...] = ()  # VL-ICL: episode seeds (default: every seed)
    sampler: str = "hashed"  # VL-ICL: which episodes config split
    scannet: Any = None  # MMIU: a ScanNet copy to render referenced images from, on the fly
    skip_references: bool = False  # MMIU: leave out items whose images are references (counted)


@dataclass(frozen=True)
class PredictionRequest:
    key: dict[str, Any]
    parts: tuple[str | bytes, ...]  # the user turn, in order: text, image bytes
    system: str | None = None
    output: str = "text"  # what the model answers with: "text", or "image" (text-to-image tasks)

    @property
    def key_text(self) -> str:
        """The key as one string (resume: which requests a previous run completed)."""
        return json.dumps(self.key, sort_keys=True, ensure_ascii=False)

    def messages(self, detail: str = "auto", text_only: bool = False) -> list[dict[str, Any]]:
        from benchsmith.core.llm_messages import image_part, text_part

        parts = [p for p in self.parts if isinstance(p, str) or not text_only]
        if all(isinstance(p, str) for p in parts):
            content: Any = "\n".join(p for p in parts if p)  # text-only servers take a string
        else:
            content = [text_part(p) if isinstance(p, str) else image_part(p, detail)
                       for p in parts if p != ""]  # fmt: skip
        turn = {"role": "user", "content": content}
        return [{"role": "system", "content": self.system}, turn] if self.system else [turn]


@dataclass
class RequestSource:
    """Where a family reads its rows: the folder, config and split and the parsed options."""

    dataset_dir: Any
    info: dict[str, Any]
    config: str
    split: str
    options: PredictOptions = field(default_factory=PredictOptions)


def generic_requests(view: Any, options: PredictOptions, key_name: str = "sample_id",
                     key_type: type = str) -> Iterator[PredictionRequest]:  # fmt: skip
    """Images, then question + option lines + instruction (the lmms-eval layout)."""
    from benchsmith.options.question_prompt import render_prompt

    for sample in view.iter_samples(with_images=not options.text_only):
        text = render_prompt(sample.question, sample.choices, instruction=options.instruction)
        images = () if options.text_only else tuple(sample.images)
        yield PredictionRequest({key_name: key_type(sample.sample_id)}, (*images, text))


@dataclass(frozen=True)
class HarnessRow:
    """One sample as single-turn harnesses (VLMEvalKit's TSV) take it: images, a question,
    options (multiple choice) or none (short answer), the gold (a letter, or the answer text),
    and two levels of category."""

    id: str
    question: str
    images: tuple[bytes, ...]
    answer: str
    options: tuple[str, ...] = ()
    category: str = ""
    l2_category: str = ""


def generic_harness_rows(view: Any, category: str) -> Iterator[HarnessRow]:
    """The generic reading: question, choices (the answer as a letter when it is one of them),
    images, the subtask as category."""
    from benchsmith.options.blind_rules import resolve_answer_index

    for sample in view.iter_samples():
        options = tuple(sample.choices or ())
        answer = sample.answer[0] if isinstance(sample.answer, list) else sample.answer
        answer = "" if answer is None else str(answer)
        if options:
            index = resolve_answer_index(answer, list(options))
            answer = chr(65 + index) if index is not None else answer
        yield HarnessRow(sample.sample_id, sample.question, tuple(sample.images), answer, options,
                         sample.subtask or category)  # fmt: skip
