"""``3d_object_detection``: the 3D boxes of every object of a category that a view shows.

Images: one colour frame and its depth; the context gives the camera pose in the scene's
aligned frame, the frame the boxes are in (the original's boxes were aligned and centred while
its poses were raw, so the two did not match). An object counts as visible when at least
:data:`MIN_VISIBLE_FRACTION` of the frame's valid depth pixels (and :data:`MIN_VISIBLE_PIXELS`)
land inside its box (grown by :data:`BOX_MARGIN_M`). The gold lists the visible boxes of the
asked category as ``[x, y, z, dx, dy, dz]`` (centre, size), sorted by x, y, z; distractors come
from :func:`benchsmith.stages.distractors.box_distractors` (sizes always positive, IoU with
the gold box at most ``options.box_max_iou``, bottoms kept at the gold's height: ScanNet objects
stand on the floor, and a floating distractor would give the gold away).
"""

from __future__ import annotations

import numpy as np

from benchsmith.builders.mmiu.geometry import back_project, pixel_centres
from benchsmith.builders.mmiu.items import Draft
from benchsmith.builders.mmiu.prompts import COORD_FRAME, POSE_CONVENTION
from benchsmith.builders.mmiu.scenes import Scene
from benchsmith.builders.mmiu.tasks.context import TaskContext
from benchsmith.sources.scannet.scene import (
    AGGREGATION_SUFFIX,
    LABELS_FILE,
    MESH_SUFFIX,
    SEGS_SUFFIX,
)
from benchsmith.stages.distractors import DistractorError, box_distractors, format_vector

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


def drafts(ctx: TaskContext) -> list[Draft]:
    style, stride = ctx.config.options, ctx.config.frames.stride
    slots = [(scene, f) for scene in ctx.scenes for f in scene.frames if f % stride == 0]
    out: list[Draft] = []
    for index in ctx.order(TASK, len(slots)):
        if len(out) == ctx.config.items_per_task:
            break
        scene, frame = slots[index]
        key = f"{scene.scene_id}/{frame}"
        rng = ctx.rng(TASK, key)
        seen = visible_boxes(scene, frame)
        categories = sorted({b.category for b in seen})
        if not categories:
            ctx.skip(TASK, "no annotated object visible in the frame")
            continue
        category = categories[int(rng.integers(len(categories)))]
        gold = sorted(
            [round(v, style.box_decimals) for v in (*b.center, *b.size)]
            for b in seen
            if b.category == category
        )
        try:
            wrong = box_distractors(gold, style.n_options - 1, rng, style.box_decimals,
                                    style.box_max_iou, keep_bottom=True)  # fmt: skip
        except DistractorError:
            ctx.skip(TASK, "no distinct distractor boxes")
            continue
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
                candidates=[box_list_text(o, style.box_decimals) for o in [gold, *wrong]],
                method="perturb:box",
                extras={
                    "camera_poses": [scene.poses[frame].tolist()],
                    "pose_convention": POSE_CONVENTION,
                    "coord_frame": COORD_FRAME,
                    "task_extras": {
                        "category": category,
                        "object_ids": sorted(b.object_id for b in seen if b.category == category),
                    },  # fmt: skip
                },
                source_ids=[f"{scene.scene_id}/frame/{frame}"],
                sources=sources,
            )
        )
    return out
