"""``3d_depth_estimation``: which candidate depth map belongs to view B.

Images: colour of views A and B (a frame pair, both poses given), then candidate depth maps,
all rendered on one grey scale (:func:`benchsmith.builders.mmiu.images.depth_picture`): the
gold is B's depth, the distractors the depth of frames of the same scene far from A and B.
"""

from __future__ import annotations

from benchsmith.builders.mmiu.items import Draft
from benchsmith.builders.mmiu.prompts import COORD_FRAME, POSE_CONVENTION
from benchsmith.builders.mmiu.tasks.context import TaskContext

TASK = "3d_depth_estimation"


def drafts(ctx: TaskContext) -> list[Draft]:
    n = ctx.config.options.n_options
    pairs = ctx.pairs()
    out: list[Draft] = []
    for index in ctx.order(TASK, len(pairs)):
        if len(out) == ctx.config.items_per_task:
            break
        scene, pair = pairs[index]
        a, b = pair.first, pair.second
        key = f"{scene.scene_id}/{a}-{b}"
        picked = ctx.far_candidates(TASK, key, scene, [a, b], n - 1)
        if picked is None:
            continue
        out.append(
            Draft(
                task=TASK,
                key=key,
                images=[ctx.color(scene, a), ctx.color(scene, b)],
                fields={
                    "pose_a": ctx.pose_text(scene.poses[a]),
                    "pose_b": ctx.pose_text(scene.poses[b]),
                },  # fmt: skip
                kind="image",
                candidates=[[ctx.depth(scene, f)] for f in [b, *picked]],
                method="same_scene_far_frames",
                extras={
                    "camera_poses": [scene.poses[f].tolist() for f in (a, b)],
                    "pose_convention": POSE_CONVENTION,
                    "coord_frame": COORD_FRAME,
                    "task_extras": {"candidate_frames": [b, *picked]},
                },
                source_ids=[f"{scene.scene_id}/frame/{f}" for f in (a, b, *picked)],
                sources=[ctx.frame_source(scene, f) for f in (a, b, *picked)],
            )
        )
    return out
