"""What ``benchsmith predict`` sends and writes, per family: the family interface's request type.

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


@dataclass(frozen=True)
class PredictionRequest:
    key: dict[str, Any]
    parts: tuple[str | bytes, ...]  # the user turn, in order: text, image bytes
    system: str | None = None

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
    from benchsmith.stages.question_prompt import render_prompt

    for sample in view.iter_samples(with_images=not options.text_only):
        text = render_prompt(sample.question, sample.choices, instruction=options.instruction)
        images = () if options.text_only else tuple(sample.images)
        yield PredictionRequest({key_name: key_type(sample.sample_id)}, (*images, text))
