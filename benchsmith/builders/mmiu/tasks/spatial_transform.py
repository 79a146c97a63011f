"""``image_spatial_transformation_estimation``: which transform maps image 1 to image 2.

Image 1 is the centre square of a COCO image at :data:`SIDE` px; image 2 is image 1 flipped
left-right or not, then rotated about the centre, then scaled about it (both PNG). The gold is
drawn uniformly from :data:`ANGLES` x :data:`SCALES` x flip, and the distractors are other
members of that same set, all written ``flip: no, rotation: +15°, scale: 1.25``: no option
stands out by its form, and none is the gold's value copied from another item (as the
original's were).
"""

from __future__ import annotations

import itertools

from benchsmith.builders.mmiu.images import image_ref
from benchsmith.builders.mmiu.items import Draft
from benchsmith.builders.mmiu.tasks.context import TaskContext
from benchsmith.options.distractors import label_distractors

TASK = "image_spatial_transformation_estimation"
SIDE = 256
ANGLES = (-45, -30, -15, 0, 15, 30, 45)
SCALES = (0.8, 1.0, 1.25)
MIN_SIDE_PX = 32


def transform_text(flip: bool, angle: int, scale: float) -> str:
    sign = "+" if angle > 0 else ""
    return f"flip: {'yes' if flip else 'no'}, rotation: {sign}{angle}°, scale: {scale:.2f}"


TRANSFORMS = [(f, a, s) for f, a, s in itertools.product((False, True), ANGLES, SCALES)]


def drafts(ctx: TaskContext) -> list[Draft]:
    assert ctx.coco is not None
    n = ctx.config.options.n_options
    images = [i for i in ctx.coco.images if min(i.width, i.height) >= MIN_SIDE_PX]
    pool = [transform_text(*t) for t in TRANSFORMS]
    out: list[Draft] = []
    for index in ctx.order(TASK, len(images)):
        if len(out) == ctx.config.items_per_task:
            break
        image = images[index]
        if not ctx.new_picture(TASK, image):
            continue
        key = str(image.image_id)
        rng = ctx.rng(TASK, key)
        flip, angle, scale = TRANSFORMS[int(rng.integers(len(TRANSFORMS)))]
        gold = transform_text(flip, angle, scale)
        out.append(
            Draft(
                task=TASK,
                key=key,
                images=[
                    image_ref(
                        "coco_transformed",
                        file=image.file_name,
                        side=SIDE,
                        flip=False,
                        angle=0,
                        scale=1.0,
                    ),
                    image_ref(
                        "coco_transformed",
                        file=image.file_name,
                        side=SIDE,
                        flip=flip,
                        angle=angle,
                        scale=scale,
                    ),
                ],  # fmt: skip
                fields={},
                kind="text",
                candidates=[gold, *label_distractors(gold, pool, n - 1, rng)],
                method="label_pool:transforms",
                extras={"task_extras": {"flip": flip, "angle_deg": angle, "scale": scale}},
                source_ids=[f"coco/{image.image_id}"],
                sources=[ctx.coco_source(image)],
            )
        )
    return out
