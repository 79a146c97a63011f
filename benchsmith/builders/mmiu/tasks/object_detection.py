"""``3d_object_detection``: the 3D boxes of every object of a category that a view shows.

Images: one colour frame and its depth; the context gives the camera pose in the scene's
aligned frame, the frame the boxes are in (the original's boxes were aligned and centred while
its poses were raw, so the two did not match). An object counts as visible when at least
:data:`MIN_VISIBLE_FRACTION` of the frame's valid depth pixels (and :data:`MIN_VISIBLE_PIXELS`)
land inside its box (grown by :data:`BOX_MARGIN_M`). The gold lists the visible boxes of the
asked category as ``[x, y, z, dx, dy, dz]`` (centre, size), sorted by x, y, z.

Distractors are **real** box lists, never jitter, of the **asked category** first: the golds
of the scene's other (frame, category) slots with as many boxes, then lists of the scene's
other objects of the category, then the same from other scenes (boxes lying inside this
scene's room), and only then other categories (counted: their sizes can give the category
away to a model that knows what a chair measures). Jittered boxes gave the gold away three
ways (MMIU 3DOD at 12 items: the option that recurred in other items was the gold 10.5 times,
the option with the roundest sizes 12 times, and some jitter stood 3.5 m tall in a 2.5 m
room). Real boxes are sized and rounded as golds are, stand where objects stand, and recur
across items as golds do. A distractor box overlaps the gold box it replaces by at most
``options.box_max_iou``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchsmith.builders.mmiu.geometry import back_project, pixel_centres
from benchsmith.builders.mmiu.items import Draft
from benchsmith.builders.mmiu.prompts import COORD_FRAME, POSE_CONVENTION
from benchsmith.builders.mmiu.scenes import Scene
from benchsmith.builders.mmiu.tasks.context import TaskContext
from benchsmith.options.distractors import box_iou, format_vector
from benchsmith.sources.scannet.scene import (
    AGGREGATION_SUFFIX,
    LABELS_FILE,
    MESH_SUFFIX,
    SEGS_SUFFIX,
)

TASK = "3d_object_detection"
MIN_VISIBLE_FRACTION = 0.01
MIN_VISIBLE_PIXELS = 10
BOX_MARGIN_M = 0.03


def visible_boxes(scene: Scene, frame: int) -> list:
    depth = scene.depth_m(frame).astype(np.float64)
    height, width = depth.shape
    values = depth.reshape(-1)
    valid = values > 0
    points = back_project(pixel_centres(width, height)[valid], values[valid],
                          scene.depth_intrinsics, scene.poses[frame])  # fmt: skip
    needed = max(MIN_VISIBLE_PIXELS, MIN_VISIBLE_FRACTION * int(valid.sum()))
    out = []
    for box in scene.boxes:
        centre, half = np.asarray(box.center), np.asarray(box.size) / 2 + BOX_MARGIN_M
        inside = (np.abs(points - centre) <= half).all(axis=1).sum()
        if inside >= needed and box.category:
            out.append(box)
    return out


def box_list_text(boxes: list[list[float]], decimals: int) -> str:
    return "[" + ", ".join(format_vector(b, decimals) for b in boxes) + "]"


Boxes = tuple[tuple[float, ...], ...]


def box_lists(seen: list, decimals: int) -> dict[str, Boxes]:
    """Category -> the sorted, rounded boxes of its objects among ``seen``."""
    out: dict[str, list] = {}
    for box in seen:
        out.setdefault(box.category, []).append(
            tuple(round(v, decimals) for v in (*box.center, *box.size))
        )
    return {category: tuple(sorted(boxes)) for category, boxes in out.items()}


def far_enough(option: Boxes, gold: Boxes, max_iou: float) -> bool:
    return option != gold and all(
        box_iou(mine, theirs) <= max_iou for mine, theirs in zip(option, gold, strict=True)
    )


@dataclass(frozen=True)
class BoxPool:
    """The real box lists one scene offers as distractors."""

    slot_lists: tuple[tuple[str, Boxes], ...]  # (category, gold) of every frame/category slot
    objects: tuple[tuple[str, tuple[float, ...]], ...]  # (category, box) of every object


def inside(boxes: Boxes, bounds: tuple[np.ndarray, np.ndarray], margin: float = 0.05) -> bool:
    low, high = bounds
    for box in boxes:
        centre, half = np.asarray(box[:3]), np.asarray(box[3:]) / 2
        if ((centre - half) < low - margin).any() or ((centre + half) > high + margin).any():
            return False
    return True


def real_distractors(
    gold: Boxes, category: str, own: BoxPool, others: list[BoxPool],
    bounds: tuple[np.ndarray, np.ndarray], n: int, rng: np.random.Generator, max_iou: float,
) -> tuple[list[Boxes], int] | None:  # fmt: skip
    """``n`` distinct real box lists as long as ``gold`` (see the module docstring for the
    order), and how many are of another category; None when the scenes have too few."""
    k = len(gold)
    chosen: list[Boxes] = []
    foreign = 0  # options of another category

    def take(candidates: list[Boxes], same: bool) -> None:
        nonlocal foreign
        for index in rng.permutation(len(candidates)).tolist():
            option = candidates[index]
            if len(chosen) < n and option not in chosen and far_enough(option, gold, max_iou):
                chosen.append(option)
                foreign += not same

    def lists(pool: BoxPool, same: bool) -> list[Boxes]:
        return sorted({b for c, b in pool.slot_lists if len(b) == k and (c == category) == same})

    def combos(pool: BoxPool, same: bool) -> list[Boxes]:
        boxes = sorted({b for c, b in pool.objects if (c == category) == same})
        if len(boxes) < k:
            return []
        draws = {tuple(sorted(boxes[i] for i in rng.choice(len(boxes), k, replace=False)))
                 for _ in range(8 * n)}  # fmt: skip
        return sorted(draws)

    for same in (True, False):
        take(lists(own, same), same)
        take(combos(own, same), same)
        if same:
            elsewhere = {b for pool in others for b in lists(pool, True) + combos(pool, True)}
            take([b for b in sorted(elsewhere) if inside(b, bounds)], same)
    if len(chosen) < n:
        return None
    return [chosen[i] for i in rng.permutation(len(chosen)).tolist()], foreign


def drafts(ctx: TaskContext) -> list[Draft]:
    style, stride = ctx.config.options, ctx.config.frames.stride
    slots = [(scene, f) for scene in ctx.scenes for f in scene.frames if f % stride == 0]
    seen_in: dict[tuple[str, int], list] = {}

    def seen(scene: Scene, frame: int) -> list:
        if (scene.scene_id, frame) not in seen_in:
            seen_in[(scene.scene_id, frame)] = visible_boxes(scene, frame)
        return seen_in[(scene.scene_id, frame)]

    pools: dict[str, BoxPool] = {}
    for scene in ctx.scenes:
        found = []
        for frame in (f for f in scene.frames if f % stride == 0):
            found += sorted(box_lists(seen(scene, frame), style.box_decimals).items())
        objects = [(b.category, tuple(round(v, style.box_decimals) for v in (*b.center, *b.size)))
                   for b in scene.boxes if b.category]  # fmt: skip
        pools[scene.scene_id] = BoxPool(tuple(found), tuple(sorted(objects)))
    out: list[Draft] = []
    for index in ctx.order(TASK, len(slots)):
        if len(out) == ctx.config.items_per_task:
            break
        scene, frame = slots[index]
        key = f"{scene.scene_id}/{frame}"
        rng = ctx.rng(TASK, key)
        visible = seen(scene, frame)
        by_category = box_lists(visible, style.box_decimals)
        categories = sorted(by_category)
        if not categories:
            ctx.skip(TASK, "no annotated object visible in the frame")
            continue
        category = categories[int(rng.integers(len(categories)))]
        gold = by_category[category]
        others = [pool for sid, pool in pools.items() if sid != scene.scene_id]
        drawn = real_distractors(gold, category, pools[scene.scene_id], others, scene.room_bounds,
                                 style.n_options - 1, rng, style.box_max_iou)  # fmt: skip
        if drawn is None:
            ctx.skip(TASK, "too few real box lists in the scenes for distractors")
            continue
        wrong, foreign = drawn
        if foreign:
            ctx.note(TASK, "distractors of another category (too few boxes of the asked one)")
        sources = [ctx.frame_source(scene, frame)] + [
            ctx.scene_file_source(scene, suffix)
            for suffix in (MESH_SUFFIX, SEGS_SUFFIX, AGGREGATION_SUFFIX, ".txt")
        ]
        labels = scene.directory.parents[1] / LABELS_FILE
        sources.append(ctx.file_source("scannet", labels, LABELS_FILE, "labels",
                                       sources[0]["license"], sources[0]["url"]))  # fmt: skip
        out.append(
            Draft(
                task=TASK,
                key=key,
                images=[ctx.color(scene, frame), ctx.depth(scene, frame)],
                fields={"pose": ctx.pose_text(scene.poses[frame]), "category": category},
                kind="text",
                candidates=[
                    box_list_text([list(b) for b in o], style.box_decimals) for o in [gold, *wrong]
                ],  # fmt: skip
                method="real_boxes:scene",
                extras={
                    "camera_poses": [scene.poses[frame].tolist()],
                    "pose_convention": POSE_CONVENTION,
                    "coord_frame": COORD_FRAME,
                    "task_extras": {
                        "category": category,
                        "object_ids": sorted(
                            b.object_id for b in visible if b.category == category
                        ),
                    },  # fmt: skip
                },
                source_ids=[f"{scene.scene_id}/frame/{frame}"],
                sources=sources,
            )
        )
    return out
