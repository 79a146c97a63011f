"""``jigsaw_puzzle_solving``: put a COCO photo cut into a grid back together.

Images: the ``grid x grid`` pieces (PNG crops of one COCO image) in a shuffled order. The
answer lists, per grid cell in reading order, the number of the image that belongs there. The
shuffle is uniform over all orders and the distractors are other orders
(:func:`benchsmith.options.distractors.permutation_distractors`), so the identity order, or any
other, is the gold exactly as often as chance says.
"""

from __future__ import annotations

from benchsmith.builders.mmiu.images import image_ref
from benchsmith.builders.mmiu.items import Draft
from benchsmith.builders.mmiu.tasks.context import TaskContext
from benchsmith.options.distractors import permutation_distractors

TASK = "jigsaw_puzzle_solving"
MIN_PIECE_PX = 24


def order_text(order: tuple[int, ...] | list[int]) -> str:
    return "[" + ", ".join(str(v) for v in order) + "]"


def drafts(ctx: TaskContext) -> list[Draft]:
    assert ctx.coco is not None
    grid, n = ctx.config.jigsaw_grid, ctx.config.options.n_options
    cells = grid * grid
    images = [i for i in ctx.coco.images if min(i.width, i.height) >= MIN_PIECE_PX * grid]
    out: list[Draft] = []
    for index in ctx.order(TASK, len(images)):
        if len(out) == ctx.config.items_per_task:
            break
        image = images[index]
        if not ctx.new_picture(TASK, image):
            continue
        key = str(image.image_id)
        rng = ctx.rng(TASK, key)
        shown = [int(c) for c in rng.permutation(cells)]  # image k shows grid cell shown[k]
        gold = tuple(shown.index(cell) + 1 for cell in range(cells))
        wrong = permutation_distractors(gold, n - 1, rng)
        out.append(
            Draft(
                task=TASK,
                key=key,
                images=[
                    image_ref("coco_piece", file=image.file_name, grid=grid, cell=c) for c in shown
                ],  # fmt: skip
                fields={"grid": grid, "cells": cells},
                kind="text",
                candidates=[order_text(o) for o in [gold, *wrong]],
                method="permutation",
                extras={"task_extras": {"pieces_shown": shown}},
                source_ids=[f"coco/{image.image_id}"],
                sources=[ctx.coco_source(image)],
            )
        )
    return out
