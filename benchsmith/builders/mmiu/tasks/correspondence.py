"""``visual_correspondence_scannet``: which marked point on image 2 is REF of image 1.

Images: two frames of a pair, as PNG with the points drawn (REF on the first; A-D on the
second). REF is a pixel of view 1 with valid depth, away from the border, that view 2 sees
(reprojected with both poses, its depth agreeing with view 2's own within the tolerance); the
gold is where it lands. Distractor points are pixels of view 2 whose own 3D points are at
least :data:`MIN_3D_GAP_M` from REF's, and every two points are at least
:data:`MIN_PIXEL_GAP` of the image's shorter side apart, so the answer is never ambiguous.
"""

from __future__ import annotations

import numpy as np

from benchsmith.builders.mmiu.geometry import back_project, visible_in
from benchsmith.builders.mmiu.images import image_ref
from benchsmith.builders.mmiu.items import Draft
from benchsmith.builders.mmiu.prompts import COORD_FRAME, POSE_CONVENTION
from benchsmith.builders.mmiu.tasks.context import TaskContext

TASK = "visual_correspondence_scannet"
MIN_3D_GAP_M = 0.3
MIN_PIXEL_GAP = 0.15
BORDER = 0.1
TRIES = 200


def _inside(px: np.ndarray, width: int, height: int) -> bool:
    return bool(BORDER * width <= px[0] < (1 - BORDER) * width
                and BORDER * height <= px[1] < (1 - BORDER) * height)  # fmt: skip


def drafts(ctx: TaskContext) -> list[Draft]:
    choice, n = ctx.config.frames, ctx.config.options.n_options
    pairs = ctx.pairs()
    out: list[Draft] = []
    for index in ctx.order(TASK, len(pairs)):
        if len(out) == ctx.config.items_per_task:
            break
        scene, pair = pairs[index]
        a, b = pair.first, pair.second
        key = f"{scene.scene_id}/{a}-{b}"
        rng = ctx.rng(TASK, key)
        depth_a, depth_b = scene.depth_m(a).astype(np.float64), scene.depth_m(b).astype(np.float64)
        height, width = depth_a.shape
        color_w, color_h = scene.info.color_size
        to_color = np.array([color_w / width, color_h / height])
        intrinsics = scene.depth_intrinsics
        points = None
        for _ in range(TRIES):
            ref = np.array([rng.uniform(BORDER, 1 - BORDER) * width,
                            rng.uniform(BORDER, 1 - BORDER) * height])  # fmt: skip
            z = depth_a[int(ref[1]), int(ref[0])]
            if z <= 0:
                continue
            world = back_project(ref[None], np.array([z]), intrinsics, scene.poses[a])
            seen, pixel = visible_in(world, depth_b, intrinsics, scene.poses[b],
                                     choice.depth_tolerance_m)  # fmt: skip
            if seen[0] and _inside(pixel[0], width, height):
                points = (ref, world[0], pixel[0])
                break
        if points is None:
            ctx.skip(TASK, "no reference point seen in both views")
            continue
        ref, world, gold = points
        gap = MIN_PIXEL_GAP * min(width, height)
        chosen = [gold]
        for _ in range(TRIES * 5):
            if len(chosen) == n:
                break
            px = np.array([rng.uniform(BORDER, 1 - BORDER) * width,
                           rng.uniform(BORDER, 1 - BORDER) * height])  # fmt: skip
            z = depth_b[int(px[1]), int(px[0])]
            if z <= 0 or any(np.linalg.norm(px - c) < gap for c in chosen):
                continue
            other = back_project(px[None], np.array([z]), intrinsics, scene.poses[b])[0]
            if np.linalg.norm(other - world) >= MIN_3D_GAP_M:
                chosen.append(px)
        if len(chosen) < n:
            ctx.skip(TASK, "too few distinct distractor points")
            continue
        ref_c = [round(float(v), 1) for v in ref * to_color]
        candidates = [[round(float(v), 1) for v in c * to_color] for c in chosen]
        out.append(
            Draft(
                task=TASK,
                key=key,
                images=[
                    image_ref(
                        "scannet_marked", scene=scene.scene_id, frame=a, marks=[["REF", *ref_c]]
                    ),
                    image_ref("scannet_marked", scene=scene.scene_id, frame=b, marks=[]),
                ],  # fmt: skip
                fields={},
                kind="point",
                candidates=candidates,
                method="same_view_far_points",
                extras={
                    "camera_poses": [scene.poses[a].tolist(), scene.poses[b].tolist()],
                    "pose_convention": POSE_CONVENTION,
                    "coord_frame": COORD_FRAME,
                    "task_extras": {
                        "ref_pixel": ref_c,
                        "gold_pixel": candidates[0],
                        "ref_point_m": [round(float(v), 4) for v in world],
                    },  # fmt: skip
                },
                source_ids=[f"{scene.scene_id}/frame/{a}", f"{scene.scene_id}/frame/{b}"],
                sources=[ctx.frame_source(scene, a), ctx.frame_source(scene, b)],
            )
        )
    return out
