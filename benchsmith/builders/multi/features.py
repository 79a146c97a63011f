"""Hugging Face features of the published MULTI configs (spec section 4's proposed schema).

``questions`` and ``elite`` (split ``test``) share one schema; ``extend`` holds the knowledge
pieces. Typed columns: ``education``, ``track``, ``question_type`` and ``image_class`` are
ClassLabels; ``options`` a list of {label, text} (empty for FB/OP); ``answer`` the release's
answer string (letters, blank lines with ``或`` alternatives, or free text) and
``answer_blanks`` the FB answer split into blanks and alternatives; ``points`` what the question
is worth; ``images`` the pictures its ``[IMAGE_n]`` tags name, in tag order, with
``image_numbers`` giving each one's ``n``; ``flags`` what cleaning found.
"""

from __future__ import annotations

import datasets

from benchsmith.builders.multi.config import EDUCATION, IMAGE_CLASSES, QUESTION_TYPES, TRACKS
from benchsmith.hf.features import PROVENANCE_FEATURE

SPLIT = "test"
QUESTIONS, ELITE, EXTEND = "questions", "elite", "extend"
CONFIGS = (QUESTIONS, ELITE, EXTEND)

_STRING = datasets.Value("string")
_INT32 = datasets.Value("int32")

QUESTION_FEATURES = datasets.Features(
    {
        "question_id": _STRING,
        "problem_id": _STRING,
        "sub_index": _STRING,
        "subject_code": _STRING,
        "subject": _STRING,
        "education": datasets.ClassLabel(names=list(EDUCATION)),
        "track": datasets.ClassLabel(names=list(TRACKS)),
        "question_type": datasets.ClassLabel(names=list(QUESTION_TYPES)),
        "problem_content": _STRING,
        "question_content": _STRING,
        "text": _STRING,
        "options": datasets.List({"label": _STRING, "text": _STRING}),
        "answer": _STRING,
        "answer_blanks": datasets.List(datasets.List(_STRING)),
        "points": _INT32,
        "analysis": _STRING,
        "knowledge": datasets.List(_STRING),
        "images": datasets.List(datasets.Image()),
        "image_paths": datasets.List(_STRING),
        "image_numbers": datasets.List(_INT32),
        "num_images": _INT32,
        "image_class": datasets.ClassLabel(names=list(IMAGE_CLASSES)),
        "image_in_choice": datasets.Value("bool"),
        "difficulty": datasets.Value("float64"),
        "quality": datasets.Value("float64"),
        "in_elite": datasets.Value("bool"),
        "source_kind": _STRING,
        "source_version": _STRING,
        "flags": datasets.List(_STRING),
        "provenance": PROVENANCE_FEATURE,
    }
)

EXTEND_FEATURES = datasets.Features(
    {
        "knowledge_key": _STRING,
        "knowledge": _STRING,
        "content": _STRING,
        "images": datasets.List(datasets.Image()),
        "image_paths": datasets.List(_STRING),
        "question_ids": datasets.List(_STRING),
        "provenance": PROVENANCE_FEATURE,
    }
)


def features_for(config: str) -> datasets.Features:
    return EXTEND_FEATURES if config == EXTEND else QUESTION_FEATURES
