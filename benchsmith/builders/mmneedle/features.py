"""Hugging Face features of the published MMNeedle configs."""

from __future__ import annotations

import datasets

from benchsmith.hf.features import PROVENANCE_FEATURE

CELL = {
    "row": datasets.Value("int64"),
    "col": datasets.Value("int64"),
    "coco_image_id": datasets.Value("int64"),
    "file_name": datasets.Value("string"),
}
NEEDLE = {
    "caption": datasets.Value("string"),
    "caption_id": datasets.Value("int64"),
    "coco_image_id": datasets.Value("int64"),
    "image_index": datasets.Value("int64"),
    "row": datasets.Value("int64"),
    "col": datasets.Value("int64"),
}

HAYSTACK_FEATURES = datasets.Features(
    {
        "stitched_id": datasets.Value("string"),
        "grid": datasets.Value("int64"),
        "image": datasets.Image(),
        "cells": datasets.List(CELL),
        "sha256": datasets.Value("string"),
        "provenance": PROVENANCE_FEATURE,
    }
)

SAMPLE_FEATURES = datasets.Features(
    {
        "sample_id": datasets.Value("int64"),
        "num_images": datasets.Value("int64"),
        "grid": datasets.Value("int64"),
        "num_needles": datasets.Value("int64"),
        "haystack": datasets.List(datasets.Value("string")),
        "is_positive": datasets.Value("bool"),
        "needles": datasets.List(NEEDLE),
        "gold_answer": datasets.Value("string"),
        "prompt": datasets.Value("string"),
        "paper_eval_subset": datasets.Value("bool"),
        "haystack_has_duplicate_image": datasets.Value("bool"),
        "ambiguous_needles": datasets.Value("int64"),
        "needles_with_twin_in_haystack": datasets.Value("int64"),
        "provenance": PROVENANCE_FEATURE,
    }
)


def haystack_config(grid: int) -> str:
    return f"haystacks_n{grid}"
