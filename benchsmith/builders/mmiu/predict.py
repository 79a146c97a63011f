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


def with_references_rendered(row: dict, published: list[bytes], sources) -> list[bytes]:
    """The item's images in order: the published ones, and each image published as a reference
    rendered from the user's ScanNet copy exactly as the build did (its sha256 checked)."""
    from benchsmith.builders.mmiu.images import checked_render

    given = iter(published)
    return [checked_render(ref, sources) if image is None else next(given)
            for image, ref in zip(row["images"], row["image_refs"], strict=True)]  # fmt: skip


def mmiu_requests(source: RequestSource, columns) -> Iterator[PredictionRequest]:
    """Each item's request. An item with images published as references (ScanNet's terms) is
    rendered from ``options.scannet`` when given, left out and counted with
    ``options.skip_references``, and otherwise an error saying both ways round."""
    from benchsmith.core.progress import log
    from benchsmith.hf.dataset_view import DatasetView

    options = source.options
    view = DatasetView(source.dataset_dir, source.config, source.split, columns)
    with_images = not options.text_only
    sources, skipped = None, 0
    if options.scannet is not None:
        from pathlib import Path

        from benchsmith.builders.mmiu.images import ImageSources

        sources = ImageSources(scannet=Path(options.scannet))
    for sample in view.iter_samples(with_images=with_images):
        row = sample.row
        images = list(sample.images)
        if with_images and len(images) != row["num_images"]:
            if sources is not None:
                images = with_references_rendered(row, images, sources)
            elif options.skip_references:
                skipped += 1
                continue
            else:
                raise BenchsmithError(
                    f"item {row['id']} has {row['num_images'] - len(images)} image(s) "
                    "published as references (ScanNet's terms), so it cannot be sent as "
                    "published", path=source.dataset_dir,
                    fix="render them from your ScanNet copy as you go (--scannet DIR), leave such "
                    "items out (--skip-references, counted), or rehydrate the folder once "
                    "(`benchsmith build mmiu rehydrate DATASET --scannet DIR --out DIR`)",
                )  # fmt: skip
        text = full_prompt(row["question"], row["context"], row["prompt_order"])
        if source.options.instruction is not None:  # replaces the answer line
            text = "\n".join(t for t in (text.removesuffix(ANSWER_SUFFIX),
                                          source.options.instruction) if t)  # fmt: skip
        yield PredictionRequest({"id": row["id"]}, (*images, text))
    if skipped:
        log(f"predict: left out {skipped} item(s) of {source.config} whose ScanNet images are "
            "published as references (--skip-references; --scannet DIR renders them)")  # fmt: skip


def mmiu_harness_rows(source: RequestSource, columns) -> Iterator[HarnessRow]:
    """Multiple choice: the task text (the context before its choice lines) and the question,
    options A..., the gold letter; category the task, l2 the relationship."""
    from benchsmith.builders.mmiu.config import RELATIONSHIPS
    from benchsmith.builders.mmiu.prompts import CHOICES_LEAD
    from benchsmith.hf.dataset_view import DatasetView

    view = DatasetView(source.dataset_dir, source.config, source.split, columns)
    sources = None
    if source.options.scannet is not None:
        from pathlib import Path

        from benchsmith.builders.mmiu.images import ImageSources

        sources = ImageSources(scannet=Path(source.options.scannet))
    for sample in view.iter_samples():
        row = sample.row
        images = list(sample.images)
        if len(images) != row["num_images"]:
            if sources is None:
                raise BenchsmithError(f"item {row['id']} has images published as references",
                                      path=source.dataset_dir,
                                      fix="pass --scannet DIR (your ScanNet copy) to render them "
                                      "as the export goes, or rehydrate the dataset first "
                                      "(`benchsmith build mmiu rehydrate`)")  # fmt: skip
            images = with_references_rendered(row, images, sources)
        task_text = row["context"].split(CHOICES_LEAD)[0].strip()
        question = "\n".join(t for t in (task_text, row["question"]) if t)
        yield HarnessRow(row["id"], question, tuple(images), row["answer"],
                         tuple(row["options"]), row["task"],
                         RELATIONSHIPS[row["relationship"]])  # fmt: skip
