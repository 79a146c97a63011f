"""``3d_depth_estimation``: which candidate depth map belongs to view B.

Images: colour of views A and B (a frame pair, both poses given), then candidate depth maps,
all rendered on one grey scale (:func:`benchsmith.builders.mmiu.images.depth_picture`): the
gold is B's depth, the distractors the depth of frames of the same scene far from A and B.
"""

from __future__ import annotations

from benchsmith.builders.mmiu.items import Draft
from benchsmith.builders.mmiu.prompts import COORD_FRAME, POSE_CONVENTION
from benchsmith.builders.mmiu.scenes import far_frames, frame_pairs
from benchsmith.builders.mmiu.tasks.context import TaskContext

TASK = "3d_depth_estimation"


def drafts(ctx: TaskContext) -> list[Draft]:
    choice, n = ctx.config.frames, ctx.config.options.n_options
    pairs = [(scene, p) for scene in ctx.scenes for p in frame_pairs(scene, choice)]
    out: list[Draft] = []
    for index in ctx.order(TASK, len(pairs)):
        if len(out) == ctx.config.items_per_task:
            break
        scene, pair = pairs[index]
        a, b = pair.first, pair.second
        key = f"{scene.scene_id}/{a}-{b}"
        far = far_frames(scene, [a, b], choice)
        if len(far) < n - 1:
            ctx.skip(TASK, "too few far frames in the scene for distractors")
            continue
        picked = [far[int(k)] for k in ctx.rng(TASK, key).choice(len(far), n - 1, replace=False)]
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
