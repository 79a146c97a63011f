"""Text variants of CLEVR and the operator tasks: the same items with each image put into words.

The paper (§3.2, Fig. 7) compares image input with "a semantically equivalent text input
describing the image": CLEVR scenes as an enumeration of their objects, operator images as the
expression they show. Its release names three such tasks (``clevr_text``,
``operator_induction_text``, ``operator_induction_interleaved_text``; its text loader knows them
as ``clevr_simple_text``, ``math_induction_text``, ``math_induction_text_interleaved``) but not
how it wrote the text, so the wording here is ours and is the card's to state.

Each variant is derived from its image task's rows in the same plan, never drawn again, so the
two differ only in how an item is shown:

* ``<task>_text``: text support, text query (text to text);
* ``<task>_text_image_query``: text support, the image task's own query (its images and
  question): the release's mixed form, support in words and the query as a picture.

A row keeps its image twin's id suffix, answer and typed extras, adds ``description`` (the
words standing for its images) and ``image_twin`` (the id of the row it was made from), and keeps
its sources (the words come from the same scene or expression). Episodes are the image task's,
ids mapped, so a text run and an image run with the same seed and shots see the same
demonstrations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from benchsmith.builders.vlicl import TaskRows
from benchsmith.builders.vlicl.operator_images import expression_text

# variant -> (image task, how its queries are shown)
TEXT_VARIANTS: dict[str, tuple[str, str]] = {
    "clevr_text": ("clevr", "text"),
    "operator_induction_text": ("operator_induction", "text"),
    "operator_induction_interleaved_text": ("operator_induction_interleaved", "text"),
    "clevr_text_image_query": ("clevr", "image"),
    "operator_induction_text_image_query": ("operator_induction", "image"),
    "operator_induction_interleaved_text_image_query": ("operator_induction_interleaved", "image"),
}
# what the original code calls the text-to-text tasks (``utils.load_text_data``); its scorer
# decides by these names (``clevr_simple`` extracts digits, ``math_induction`` does not)
LEGACY_NAMES: dict[str, str] = {
    "clevr_text": "clevr_simple_text",
    "operator_induction_text": "math_induction_text",
    "operator_induction_interleaved_text": "math_induction_text_interleaved",
}

Describe = Callable[[dict[str, Any]], str]


def image_task(task: str) -> str:
    """The image task a task is shown like (itself for an image task)."""
    return TEXT_VARIANTS[task][0] if task in TEXT_VARIANTS else task


def legacy_name(task: str) -> str:
    """The name the original code gives ``task`` (its scorer's rules follow names)."""
    return LEGACY_NAMES.get(task, task)


def describe_clevr_objects(objects: tuple[dict, ...] | list[dict]) -> str:
    """A CLEVR scene in words: its objects in the scene file's order, each as size, colour,
    material and shape (every attribute a question can name, nothing else)."""
    named = [f"a {o['size']} {o['color']} {o['material']} {o['shape']}" for o in objects]
    noun = "object" if len(named) == 1 else "objects"
    return f"The scene has {len(named)} {noun}: " + "; ".join(named) + "."


def describe_expression(a: int, b: int) -> str:
    """What an operator image shows, in the very characters drawn: ``A ? B``."""
    return expression_text(a, b)


def describe_operands(a: int, b: int) -> str:
    """What the interleaved task's two images show, one digit each, in order."""
    return f"First image: {a}. Second image: {b}."


def describer(task: str, scenes: Mapping[str, list] | None = None) -> Describe:
    """How a row of image task ``task`` is put into words (CLEVR needs its scenes, by split)."""
    if task == "clevr":
        objects = {(split, scene.image_index): scene.objects
                   for split, listed in (scenes or {}).items() for scene in listed}  # fmt: skip
        return lambda row: describe_clevr_objects(
            objects[(row["extras"]["source_split"], row["extras"]["scene_index"])]
        )
    if task == "operator_induction":
        return lambda row: describe_expression(row["extras"]["a"], row["extras"]["b"])
    if task == "operator_induction_interleaved":
        return lambda row: describe_operands(row["extras"]["a"], row["extras"]["b"])
    raise ValueError(f"{task} has no text variant")


def _twin_id(variant: str, base_id: str) -> str:
    task, split, suffix = base_id.split("/", 2)
    return f"{variant}/{split}/{suffix}"


def _text_row(variant: str, row: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        **row,
        "id": _twin_id(variant, row["id"]),
        "task": variant,
        "images": [],
        "question": f"{description}\n{row['question']}",
        "extras": {**row["extras"], "description": description, "image_twin": row["id"]},
    }


def _image_row(variant: str, row: dict[str, Any], description: str) -> dict[str, Any]:
    return {
        **row,
        "id": _twin_id(variant, row["id"]),
        "task": variant,
        "extras": {**row["extras"], "description": description, "image_twin": row["id"]},
    }


def text_variant_rows(variant: str, base: TaskRows, describe: Describe) -> TaskRows:
    """The variant's rows from its image task's: support always in words, queries in words or
    as the image task's own."""
    _, form = TEXT_VARIANTS[variant]
    query_row = _text_row if form == "text" else _image_row
    support = [_text_row(variant, r, describe(r)) for r in base.support]
    query = [query_row(variant, r, describe(r)) for r in base.query]
    return TaskRows(support, query, {"image_twin_task": TEXT_VARIANTS[variant][0],
                                     "query_form": form})  # fmt: skip


def twin_episodes(variant: str, base_episodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The image task's episode rows for ``variant``: the same demonstrations, ids mapped."""
    return [
        {
            **row,
            "task": variant,
            "query_id": _twin_id(variant, row["query_id"]),
            "demo_ids": [_twin_id(variant, d) for d in row["demo_ids"]],
        }  # fmt: skip
        for row in base_episodes
    ]


def twin_removals(removed: Mapping[str, list[str]], tasks: list[str]) -> dict[str, list[str]]:
    """Queries a variant loses because its image twin was removed (leakage), by variant."""
    return {
        variant: sorted(_twin_id(variant, q) for q in removed.get(image_task(variant), []))
        for variant in tasks
        if variant in TEXT_VARIANTS
    }
