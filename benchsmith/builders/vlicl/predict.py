"""What ``benchsmith predict`` sends for VL-ICL: one request per query, shot count and seed.

The ``episodes`` config (split = sampler, ``hashed`` by default) lists, per query, ``n_shot`` and
``seed``, the demonstrations (support ids) and their answers. A request is the task's
instruction, then each demonstration's images with ``Question: ...`` and ``Answer: ...``, then the
query's images with its question and an open ``Answer:`` (the paper's LLaVA-style layout, images
interleaved where they belong). It is written as ``query_id``, ``n_shot`` and ``seed``: what the
VL-ICL scorer reads. ``--shots`` and ``--seeds`` choose which episodes are run.

A text-to-image task (``open_t2i_mi``, ``cobsat``) asks for an image instead: the instruction, each
demonstration's prompt followed by its image ("Generate a dax", image), then the query's prompt,
as the original's ``ICL_T2I_inference`` lays them out; the request's ``output`` is ``"image"``.

A single-turn harness (VLMEvalKit) gets each query zero-shot (:func:`vlicl_harness_rows`): the
same instruction and ``Question: ...`` / ``Answer:`` text as predict's zero-shot request, the
query's images before it.
"""

from __future__ import annotations

from collections.abc import Iterator

from benchsmith.core.errors import BenchsmithError
from benchsmith.family.requests import HarnessRow, PredictionRequest, RequestSource

INSTRUCTIONS = {
    "open_mi": "Each image shows an object with a made-up name. Learn the names from the "
    "examples and answer with the name only.",
    "matching_mi": "Decide from the examples whether the two images match as they do there. "
    "Answer with the word used in the examples.",
    "clevr": "Each question names an attribute and a value; count the objects in the scene "
    "that have it, following the examples. Answer with a number only.",
    "operator_induction": "Each image shows two numbers and a hidden operator; find the "
    "operator from the examples and answer with the result only.",
    "textocr": "Answer with the text shown in the red box only.",
    # text to image: the answer is an image
    "open_t2i_mi": "Each example pairs a made-up name with an image of what it names. Learn "
    "the names from the examples and generate an image of what the last name names.",
    "fast_count_t2i": "Each example pairs a text naming how many of a made-up thing to draw "
    "with an image of them. Learn what the made-up name stands for and generate an image for "
    "the last text.",
    "fast_attr_t2i": "Each example pairs a text naming a made-up thing with an attribute with "
    "an image of it. Learn what the made-up name stands for and generate an image for the "
    "last text.",
    "cobsat": "The example images share a hidden object or attribute; each text names what "
    "else its image shows. Infer what they share and generate an image of it combined with "
    "the last text.",
    # text variants (text_variants.py): the examples in words; the query in words or an image
    "clevr_text": "Each scene is described in words and each question names an attribute and "
    "a value; count the objects in the scene that have it, following the examples. Answer with "
    "a number only.",
    "clevr_text_image_query": "The example scenes are described in words, the last scene is "
    "an image; each question names an attribute and a value: count the objects that have it, "
    "following the examples. Answer with a number only.",
    "operator_induction_text": "Each expression shows two numbers and a hidden operator; find "
    "the operator from the examples and answer with the result only.",
    "operator_induction_text_image_query": "Each expression shows two numbers and a hidden "
    "operator, in words in the examples and as an image at the end; find the operator from "
    "the examples and answer with the result only.",
    "operator_induction_interleaved_text": "Each item names two numbers with a hidden "
    "operator between them; find the operator from the examples and answer with the result "
    "only.",
    "operator_induction_interleaved_text_image_query": "Each item gives two numbers with a "
    "hidden operator between them, in words in the examples and as two images at the end; "
    "find the operator from the examples and answer with the result only.",
}
DEFAULT_INSTRUCTION = "Answer the question as in the examples, with the answer only."


def _rows(source: RequestSource, split: str, columns, with_images: bool) -> dict[str, tuple]:
    from benchsmith.hf.dataset_view import DatasetView

    view = DatasetView(source.dataset_dir, source.config, split, columns)
    return {s.sample_id: (s.question, tuple(s.images)) for s in view.iter_samples(
        with_images=with_images)}  # fmt: skip


def vlicl_requests(source: RequestSource, columns) -> Iterator[PredictionRequest]:
    from benchsmith.builders.vlicl.config import GENERATION_TASKS
    from benchsmith.hf.dataset_view import ColumnMap, DatasetView

    options = source.options
    generates = source.config in GENERATION_TASKS
    if source.split != "query":
        raise BenchsmithError(f"VL-ICL predictions are for queries, not split {source.split!r}",
                              fix="use --split query (demonstrations come from the support split)")  # fmt: skip
    with_images = not options.text_only
    support = _rows(source, "support", columns, with_images)
    queries = _rows(source, "query", columns, with_images)
    episodes = DatasetView(source.dataset_dir, "episodes", options.sampler,
                           ColumnMap(id="query_id", question="task", answer="demo_answers"))  # fmt: skip
    instruction = INSTRUCTIONS.get(source.config, DEFAULT_INSTRUCTION)
    if options.instruction is not None:
        instruction = options.instruction
    for episode in episodes.iter_samples(with_images=False):
        row = episode.row
        if row["task"] != source.config:
            continue
        if options.shots and row["n_shot"] not in options.shots:
            continue
        if options.seeds and row["seed"] not in options.seeds:
            continue
        parts: list[str | bytes] = [instruction] if instruction else []
        for demo, answer in zip(row["demo_ids"], row["demo_answers"], strict=True):
            question, images = support[demo]
            parts += [question, *images] if generates else [
                *images, f"Question: {question}\nAnswer: {answer}"]  # fmt: skip
        question, images = queries[row["query_id"]]
        parts += [question] if generates else [*images, f"Question: {question}\nAnswer:"]
        key = {"query_id": row["query_id"], "n_shot": int(row["n_shot"]), "seed": int(row["seed"])}
        yield PredictionRequest(key, tuple(parts), output="image" if generates else "text")


def zero_shot_text(instruction: str, question: str) -> str:
    """The text of a zero-shot request: what predict sends around the query's images."""
    return "\n".join(t for t in (instruction, f"Question: {question}\nAnswer:") if t)


def vlicl_harness_rows(source: RequestSource, columns) -> Iterator[HarnessRow]:
    """Each query of ``source.config`` zero-shot, as predict sends it at ``--shots 0``: the
    task's instruction and the question (without it a model sees ``shape: cylinder``); short
    answer, the task as category."""
    from benchsmith.hf.dataset_view import DatasetView

    instruction = INSTRUCTIONS.get(source.config, DEFAULT_INSTRUCTION)
    view = DatasetView(source.dataset_dir, source.config, source.split, columns)
    for sample in view.iter_samples():
        answer = "" if sample.answer is None else str(sample.answer)
        yield HarnessRow(sample.sample_id, zero_shot_text(instruction, sample.question),
                         tuple(sample.images), answer, (), source.config)  # fmt: skip
