"""Hugging Face features of the published MMIU configs (spec section 4's clean schema).

One config per task, split ``test``, and ``circular``: every item once per rotation of its
options (the paper's shuffled re-run made exact: an item counts as right only when every
rotation is answered right). Typed columns, never the release's stringly fields:

- ``options`` is a list of option texts (letters stripped); ``answer`` the letter and
  ``answer_index`` its 0-based position;
- ``images`` in presentation order; with ScanNet images published as references, those
  entries are null and ``image_refs`` (always present, one per image) says how to re-render
  them from your own ScanNet copy (``benchsmith build mmiu rehydrate``);
- ``camera_poses`` (4x4 each, camera -> aligned world), ``pose_convention`` and
  ``coord_frame`` for the ScanNet tasks (empty for COCO tasks);
- ``task_extras``: the task's own ground truth (pixel coordinates, categories, transforms) as
  JSON text, because each task has different keys.
"""

from __future__ import annotations

import datasets

from benchsmith.builders.mmiu.config import RELATIONSHIPS, TASKS
from benchsmith.hf.features import PROVENANCE_FEATURE

SPLIT = "test"
CIRCULAR_CONFIG = "circular"
CONFIGS = (*TASKS, CIRCULAR_CONFIG)

_STRING = datasets.Value("string")
_INT32 = datasets.Value("int32")

IMAGE_REF = {
    "kind": _STRING,
    "scene": _STRING,
    "frame": _INT32,
    "file": _STRING,
    "params": _STRING,
    "sha256": _STRING,
}

ITEM_FEATURES = datasets.Features(
    {
        "id": _STRING,
        "task": _STRING,
        "task_abbr": _STRING,
        "relationship": datasets.ClassLabel(names=list(RELATIONSHIPS)),
        "source_dataset": _STRING,
        "question": _STRING,
        "context": _STRING,
        "options": datasets.List(_STRING),
        "answer": _STRING,
        "answer_index": _INT32,
        "num_options": _INT32,
        "prompt_order": _STRING,
        "images": datasets.List(datasets.Image()),
        "image_refs": datasets.List(IMAGE_REF),
        "num_images": _INT32,
        "distractor_method": _STRING,
        "camera_poses": datasets.List(datasets.List(datasets.List(datasets.Value("float64")))),
        "pose_convention": _STRING,
        "coord_frame": _STRING,
        "task_extras": _STRING,
        "source_ids": datasets.List(_STRING),
        "provenance": PROVENANCE_FEATURE,
    }
)

CIRCULAR_FEATURES = datasets.Features({**ITEM_FEATURES, "item_id": _STRING, "rotation": _INT32})


def features_for(config: str) -> datasets.Features:
    return CIRCULAR_FEATURES if config == CIRCULAR_CONFIG else ITEM_FEATURES
