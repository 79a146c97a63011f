"""From task drafts to finished items: the gold's letter, the options, the context.

A task module writes :class:`Draft` s: the fixed images, the texts, and its candidates with
the gold first. Where the gold lands is decided here, for a whole config at once, by
:func:`benchsmith.options.distractors.balanced_positions` (every letter equally often), and
:func:`finish` then orders the candidates. Candidates come in three kinds:

- ``text``: each candidate is its option text;
- ``image``: each candidate is a list of image references appended after the fixed images,
  and the option is "Image n" (its number in the row's image list);
- ``point``: each candidate is a pixel ``(x, y)`` on the last fixed image; the points are drawn
  on it with letters in option order and the option is "Point X".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from benchsmith.builders.mmiu.config import TASK_RELATIONSHIP
from benchsmith.builders.mmiu.images import ImageSources, image_ref, ref_params, with_sha256
from benchsmith.builders.mmiu.prompts import TEMPLATES, choices_block, prompt_order
from benchsmith.options.distractors import OptionSet, assemble


@dataclass
class Draft:
    task: str
    key: str  # stable and unique in the task: scene/frames or COCO image id
    images: list[dict[str, Any]]  # references, in order (without sha256)
    fields: dict[str, Any]  # values of the task's context/question template
    kind: str  # text | image | point
    candidates: list[Any]  # gold first
    method: str  # how the distractors were made
    extras: dict[str, Any] = field(default_factory=dict)
    source_ids: list[str] = field(default_factory=list)
    sources: list[dict[str, str]] = field(default_factory=list)


def item_id(task: str, index: int) -> str:
    return f"{task}_{index:05d}"


def _letter(k: int) -> str:
    return chr(ord("A") + k)


def finish(draft: Draft, index: int, position: int, sources: ImageSources) -> dict[str, Any]:
    """The item row of the plan: gold at ``position``, images checked by rendering once."""
    n = len(draft.candidates)
    order = [k for k in range(1, n)]
    order.insert(position, 0)  # order[slot] = candidate index shown at that slot
    images = list(draft.images)
    if draft.kind == "text":
        options = [draft.candidates[k] for k in order]
    elif draft.kind == "image":
        options = []
        for k in order:
            options.append(f"Image {len(images) + 1}")
            images.extend(draft.candidates[k])
    else:  # point: the last fixed image gets the lettered points
        marked = images[-1]
        params = ref_params(marked)
        marks = params.get("marks", [])
        marks = marks + [[_letter(slot), *draft.candidates[k]] for slot, k in enumerate(order)]
        images[-1] = image_ref(
            "scannet_marked", scene=marked["scene"], frame=marked["frame"], marks=marks
        )
        options = [f"Point {_letter(slot)}" for slot in range(n)]
    option_set: OptionSet = assemble(options[position], [o for s, o in enumerate(options)
                                     if s != position], position, draft.method)  # fmt: skip
    context_text, question_text = TEMPLATES[draft.task]
    context = context_text.format(**draft.fields) + "\n" + choices_block(option_set.options)
    return {
        "id": item_id(draft.task, index),
        "task": draft.task,
        "relationship": TASK_RELATIONSHIP[draft.task],
        "question": question_text.format(**draft.fields),
        "context": context,
        "options": option_set.options,
        "answer": option_set.answer,
        "answer_index": option_set.answer_index,
        "prompt_order": prompt_order(draft.task),
        "images": [with_sha256(ref, sources) for ref in images],
        "option_kind": draft.kind,
        "distractor_method": draft.method,
        "option_methods": option_set.methods,
        "camera_poses": draft.extras.get("camera_poses", []),
        "pose_convention": draft.extras.get("pose_convention", ""),
        "coord_frame": draft.extras.get("coord_frame", ""),
        "task_extras": json.dumps(draft.extras.get("task_extras", {}), sort_keys=True),
        "source_ids": draft.source_ids,
        "sources": draft.sources,
        "key": draft.key,
    }
