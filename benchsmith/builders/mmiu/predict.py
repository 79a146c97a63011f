"""An MMIU item as a run sends it and as a harness takes it.

``predict``: its images in order, then the prompt the official evaluation assembles (context and
question in the item's ``prompt_order``, then "Please answer the option directly like
A,B,C,D..."); written as ``id``, which MMIU's scorer reads. ``export vlmevalkit``: multiple
choice rows (:func:`mmiu_harness_rows`)."""

from __future__ import annotations

from collections.abc import Iterator

from benchsmith.builders.mmiu.prompts import ANSWER_SUFFIX, full_prompt
from benchsmith.core.errors import BenchsmithError
from benchsmith.family.requests import HarnessRow, PredictionRequest, RequestSource


def mmiu_requests(source: RequestSource, columns) -> Iterator[PredictionRequest]:
    from benchsmith.hf.dataset_view import DatasetView

    view = DatasetView(source.dataset_dir, source.config, source.split, columns)
    with_images = not source.options.text_only
    for sample in view.iter_samples(with_images=with_images):
        row = sample.row
        if with_images and len(sample.images) != row["num_images"]:
            raise BenchsmithError(
                f"item {row['id']} has {row['num_images'] - len(sample.images)} image(s) "
                "published as references (ScanNet's terms), so it cannot be sent",
                path=source.dataset_dir,
                fix="rehydrate it from your ScanNet copy first: `benchsmith build mmiu rehydrate "
                "DATASET --scannet DIR --out DIR`, and predict on that folder (or --text-only)",
            )
        text = full_prompt(row["question"], row["context"], row["prompt_order"])
        if source.options.instruction is not None:  # replaces the answer line
            text = "\n".join(t for t in (text.removesuffix(ANSWER_SUFFIX),
                                          source.options.instruction) if t)  # fmt: skip
        yield PredictionRequest({"id": row["id"]}, (*sample.images, text))


def mmiu_harness_rows(source: RequestSource, columns) -> Iterator[HarnessRow]:
    """Multiple choice: the task text (the context before its choice lines) and the question,
    options A..., the gold letter; category the task, l2 the relationship."""
    from benchsmith.builders.mmiu.config import RELATIONSHIPS
    from benchsmith.builders.mmiu.prompts import CHOICES_LEAD
    from benchsmith.hf.dataset_view import DatasetView

    view = DatasetView(source.dataset_dir, source.config, source.split, columns)
    for sample in view.iter_samples():
        row = sample.row
        if len(sample.images) != row["num_images"]:
            raise BenchsmithError(f"item {row['id']} has images published as references",
                                  path=source.dataset_dir,
                                  fix="rehydrate the dataset first (`benchsmith build mmiu "
                                  "rehydrate`) and export that folder")  # fmt: skip
        task_text = row["context"].split(CHOICES_LEAD)[0].strip()
        question = "\n".join(t for t in (task_text, row["question"]) if t)
        yield HarnessRow(row["id"], question, tuple(sample.images), row["answer"],
                         tuple(row["options"]), row["task"],
                         RELATIONSHIPS[row["relationship"]])  # fmt: skip
