"""Hugging Face features of the published VL-ICL configs.

One config per task, each with splits ``support`` and ``query``. A config has one schema for
both splits (``load_dataset`` casts every split to the config's features), so a column that
only one split uses is null in the other: e.g. ``open_mi`` ``word``/``shot_index`` are
support-only and ``classes``/``query_word``/``episode_support`` are query-only, and operator
support rows have ``operator`` null (the operator is a property of the query).

Typed extras are real columns, never a JSON blob, so they can be filtered and aggregated:

* ``clevr``: ``attribute`` is a ClassLabel over the four CLEVR attributes (notes section 3);
  ``value`` stays a string because its vocabulary depends on the attribute.
* operators: ``operator`` is ``ClassLabel(["+", "-", "x"])``: the class index equals the index
  the original release uses into its ``[A+B, A-B, AxB]`` answer list, so ``answers_by_op`` and
  the label line up without a lookup table.
* ``open_mi`` query: ``episode_support`` lists the 5 classes of the stored episode with the
  ids of their support rows instead of embedding the images a second time (200 queries x 25
  images would double the config's size); join on ``id`` of the ``support`` split.

Images are ``List(Image())`` in presentation order; each image's ``path`` is its content hash
(``<sha256[:16]>.<ext>``, :mod:`benchsmith.hf.image_names`): a MiniImageNet file name starts
with its class id, which would answer ``open_mi`` and ``matching_mi``. The source file of each
image is in the row's ``provenance.sources``, which is what the audit reads.
"""

from __future__ import annotations

import datasets

# Task, split and sampler names (SAMPLERS are the splits of the episodes config) are the
# builder's, imported so build and publish cannot disagree, and re-exported for publish/audit.
from benchsmith.builders.vlicl import SPLITS as SPLITS
from benchsmith.builders.vlicl.clevr_count import ATTRIBUTES
from benchsmith.builders.vlicl.config import OPERATOR_TASKS as OPERATOR_TASKS
from benchsmith.builders.vlicl.config import SAMPLERS as SAMPLERS
from benchsmith.builders.vlicl.config import TASKS as TASKS
from benchsmith.builders.vlicl.operators import OPERATORS as OPERATOR_SYMBOLS
from benchsmith.builders.vlicl.text_variants import TEXT_VARIANTS
from benchsmith.hf.features import PROVENANCE_FEATURE

EPISODES_CONFIG = "episodes"

# ClassLabel names: the class index is the position in the builder's own tuple
CLEVR_ATTRIBUTES = list(ATTRIBUTES)
OPERATORS = list(OPERATOR_SYMBOLS)
MATCHING_LABELS = ["same", "different"]

_STRING = datasets.Value("string")
_INT32 = datasets.Value("int32")
_INT64 = datasets.Value("int64")
_BOOL = datasets.Value("bool")

COMMON = {
    "id": _STRING,
    "task": _STRING,
    "images": datasets.List(datasets.Image()),
    "question": _STRING,
    "answer": _STRING,
}

EXTRAS: dict[str, dict[str, datasets.features.features.FeatureType]] = {
    "open_mi": {
        "episode_id": _INT64,
        "real_label": _STRING,
        "word": _STRING,  # support only
        "shot_index": _INT32,  # support only
        "classes": datasets.List(_STRING),  # query only
        "query_word": _STRING,  # query only
        "episode_support": datasets.List(  # query only
            {"word": _STRING, "real_label": _STRING, "image_ids": datasets.List(_STRING)}
        ),
    },
    "matching_mi": {
        "group_id": _INT64,
        "label": datasets.ClassLabel(names=MATCHING_LABELS),
        "class_a": _STRING,
        "class_b": _STRING,
    },
    "clevr": {
        "attribute": datasets.ClassLabel(names=CLEVR_ATTRIBUTES),
        "value": _STRING,
        "count": _INT32,
        "source_split": _STRING,
        "scene_index": _INT64,
        "value_present": _BOOL,
    },
    "operator_induction": {
        "a": _INT32,
        "b": _INT32,
        "answers_by_op": {"plus": _INT32, "minus": _INT32, "times": _INT32},
        "operator": datasets.ClassLabel(names=OPERATORS),  # null on support rows
    },
}
EXTRAS["operator_induction_interleaved"] = EXTRAS["operator_induction"]
# open_mi's columns and the name a judge looks for in a generated image (the query's answer)
EXTRAS["open_t2i_mi"] = {**EXTRAS["open_mi"], "class_name": _STRING}
# TextOCR: the annotation of the word in the red box (ingested: -1 / empty when the release
# entry does not carry it)
_FLOAT = datasets.Value("float64")
EXTRAS["textocr"] = {
    "bbox": datasets.List(_FLOAT),  # [x, y, w, h] in the TextOCR image
    "points": datasets.List(_FLOAT),  # the polygon, x1, y1, x2, y2, ...
    "area": _FLOAT,
    "img_w": _INT32,
    "img_h": _INT32,
    "textocr_img_id": _STRING,
    "ann_id": _STRING,
}
# the fast T2I tasks (ingest only): open_t2i_mi's columns (the demo prompt, built from the
# stored caption, is the support row's question)
EXTRAS["fast_count_t2i"] = EXTRAS["fast_attr_t2i"] = EXTRAS["open_t2i_mi"]
# CoBSAT (ingest only): the scenario a query belongs to (demonstrations come from the same one)
# and both values a judge looks for; ``answer`` is the latent one
EXTRAS["cobsat"] = {
    "scenario_id": _STRING,  # "<task>|<latent>|<latent value>"
    "cobsat_task": _STRING,  # CoBSAT's own task (the release's "task" field)
    "latent": _STRING,  # which field the demonstrations share: object or attribute
    "object": _STRING,
    "attribute": _STRING,
    "answers": datasets.List(_STRING),  # [latent value, non-latent value]
}
# a text variant: its image task's columns, the words standing for the images, and the image
# task's row it was made from (text_variants.py)
TEXT_EXTRAS = {"description": _STRING, "image_twin": _STRING}
EXTRAS.update({variant: {**EXTRAS[base], **TEXT_EXTRAS}
               for variant, (base, _) in TEXT_VARIANTS.items()})  # fmt: skip

# Keys each split's build rows must carry in ``extras`` (the build-directory contract).
REQUIRED_EXTRAS: dict[str, dict[str, tuple[str, ...]]] = {
    "open_mi": {
        "support": ("episode_id", "word", "real_label", "shot_index"),
        "query": ("episode_id", "classes", "query_word", "real_label", "episode_support"),
    },
    "open_t2i_mi": {
        "support": ("episode_id", "word", "real_label", "class_name", "shot_index"),
        "query": (
            "episode_id",
            "classes",
            "query_word",
            "real_label",
            "class_name",
            "episode_support",
        ),
    },
    "matching_mi": {s: ("group_id", "label", "class_a", "class_b") for s in SPLITS},
    "cobsat": {s: tuple(EXTRAS["cobsat"]) for s in SPLITS},
    "textocr": {s: tuple(EXTRAS["textocr"]) for s in SPLITS},
    "clevr": {
        s: ("attribute", "value", "count", "source_split", "scene_index", "value_present")
        for s in SPLITS
    },
    **{
        task: {s: ("a", "b", "answers_by_op", "operator") for s in SPLITS}
        for task in OPERATOR_TASKS
    },
}
REQUIRED_EXTRAS["fast_count_t2i"] = REQUIRED_EXTRAS["fast_attr_t2i"] = REQUIRED_EXTRAS[
    "open_t2i_mi"
]
REQUIRED_EXTRAS.update({
    variant: {split: (*REQUIRED_EXTRAS[base][split], *TEXT_EXTRAS) for split in SPLITS}
    for variant, (base, _) in TEXT_VARIANTS.items()
})  # fmt: skip


def task_features(task: str) -> datasets.Features:
    """Features of one task config (both splits)."""
    return datasets.Features({**COMMON, **EXTRAS[task], "provenance": PROVENANCE_FEATURE})


EPISODE_FEATURES = datasets.Features(
    {
        "task": _STRING,
        "sampler": _STRING,
        "seed": _INT64,
        "n_shot": _INT32,
        "query_id": _STRING,
        "demo_ids": datasets.List(_STRING),
        "demo_answers": datasets.List(_STRING),
        "classes": datasets.List(_STRING),  # open_mi: the 2 words in presentation order
        "distractor": _STRING,  # open_mi: the word that is not the query's
        "reveals_query_expression": _BOOL,  # operators: a demo shows the query's (a, b)
        "provenance": PROVENANCE_FEATURE,
    }
)


def class_label_columns(features: datasets.Features) -> dict[str, datasets.ClassLabel]:
    """Top-level ClassLabel columns: build rows hold their names, arrow stores the index."""
    return {k: v for k, v in features.items() if isinstance(v, datasets.ClassLabel)}
