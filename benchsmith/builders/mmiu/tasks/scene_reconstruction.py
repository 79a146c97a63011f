"""``3d_scene_reconstruction``: which candidate colour image was taken at a stated pose.

Images: colour and depth of views A and B (a frame pair), then the candidates. The query is
the frame one stride after B (within the pose limits of B, overlapping it); the distractors are
colour frames of the same scene far from A, B and the query. Every candidate is a colour frame
of one stream: same size, same JPEG encoding (the original's gold was the only ``.jpg``).
"""

from __future__ import annotations

from benchsmith.builders.mmiu.items import Draft
from benchsmith.builders.mmiu.prompts import COORD_FRAME, POSE_CONVENTION
from benchsmith.builders.mmiu.scenes import overlap, within_limits
from benchsmith.builders.mmiu.tasks.context import TaskContext

TASK = "3d_scene_reconstruction"


def drafts(ctx: TaskContext) -> list[Draft]:
    choice, n = ctx.config.frames, ctx.config.options.n_options
    triples = []
    for scene, pair in ctx.pairs():
        query = pair.second + choice.stride
        if (
            query in scene.poses
            and within_limits(scene, pair.second, query, choice)
            and overlap(scene, pair.second, query, choice) >= choice.min_overlap
        ):
            triples.append((scene, pair.first, pair.second, query))
    out: list[Draft] = []
    for index in ctx.order(TASK, len(triples)):
        if len(out) == ctx.config.items_per_task:
            break
        scene, a, b, q = triples[index]
        key = f"{scene.scene_id}/{a}-{b}-{q}"
        picked = ctx.far_candidates(TASK, key, scene, [a, b, q], n - 1)
        if picked is None:
            continue
        out.append(
            Draft(
                task=TASK,
                key=key,
                images=[
                    ctx.color(scene, a),
                    ctx.depth(scene, a),
                    ctx.color(scene, b),
                    ctx.depth(scene, b),
                ],  # fmt: skip
                fields={
                    "pose_a": ctx.pose_text(scene.poses[a]),
                    "pose_b": ctx.pose_text(scene.poses[b]),
                    "pose_q": ctx.pose_text(scene.poses[q]),
                },  # fmt: skip
                kind="image",
                candidates=[[ctx.color(scene, f)] for f in [q, *picked]],
                method="same_scene_far_frames",
                extras={
                    "camera_poses": [scene.poses[f].tolist() for f in (a, b, q)],
                    "pose_convention": POSE_CONVENTION,
                    "coord_frame": COORD_FRAME,
                    "task_extras": {"candidate_frames": [q, *picked]},
                },
                source_ids=[f"{scene.scene_id}/frame/{f}" for f in (a, b, q, *picked)],
                sources=[ctx.frame_source(scene, f) for f in (a, b, q, *picked)],
            )
        )
    return out
