"""``3d_pose_estimation``: the relative pose between two nearby views.

Images: colour and depth of view 0, then of view 1. The gold is ``inv(T1) @ T0`` as a 3x4
``[R | t]`` at ``options.pose_decimals``. Distractors are the relative poses of *other* frame
pairs of the same scene and stride, so they come from the very distribution the gold comes
from: "closest to identity", "most decimals" or "smallest translation" pick the gold at chance
(the original's distractors were absolute poses, so the gold was the only near-identity
matrix). Each must differ from the gold and from each other by at least 1 cm or 1 degree. When
a scene has too few other pairs, the rest are drawn by
:func:`benchsmith.options.distractors.pose_distractors` and the item's method says so.
"""

from __future__ import annotations

import numpy as np

from benchsmith.builders.mmiu.geometry import relative_pose, rotation_deg
from benchsmith.builders.mmiu.items import Draft
from benchsmith.builders.mmiu.prompts import COORD_FRAME, POSE_CONVENTION
from benchsmith.builders.mmiu.scenes import FramePair
from benchsmith.builders.mmiu.tasks.context import TaskContext
from benchsmith.options.distractors import DistractorError, pose_distractors

TASK = "3d_pose_estimation"
MIN_TRANSLATION_GAP_M = 0.01
MIN_ROTATION_GAP_DEG = 1.0


def distinct_motion(a: np.ndarray, b: np.ndarray) -> bool:
    gap = relative_pose(a, b)  # the motion between two motions
    return (
        float(np.linalg.norm(a[:3, 3] - b[:3, 3])) >= MIN_TRANSLATION_GAP_M
        or rotation_deg(gap) >= MIN_ROTATION_GAP_DEG
    )


def motion(ctx: TaskContext, pair: FramePair) -> np.ndarray:
    scene = next(s for s in ctx.scenes if s.scene_id == pair.scene)
    return relative_pose(scene.poses[pair.first], scene.poses[pair.second])


def drafts(ctx: TaskContext) -> list[Draft]:
    style = ctx.config.options
    pairs = [pair for _, pair in ctx.pairs()]
    by_scene: dict[str, list[FramePair]] = {}
    for pair in pairs:
        by_scene.setdefault(pair.scene, []).append(pair)
    out: list[Draft] = []
    for index in ctx.order(TASK, len(pairs)):
        if len(out) == ctx.config.items_per_task:
            break
        pair = pairs[index]
        key = f"{pair.scene}/{pair.first}-{pair.second}"
        rng = ctx.rng(TASK, key)
        gold = motion(ctx, pair)
        texts = {ctx.pose_text(gold)}
        chosen: list[np.ndarray] = []
        pool = [p for p in by_scene[pair.scene] if p != pair]
        for k in rng.permutation(len(pool)):
            if len(chosen) == style.n_options - 1:
                break
            candidate = motion(ctx, pool[int(k)])
            text = ctx.pose_text(candidate)
            if text not in texts and all(distinct_motion(candidate, c) for c in [gold, *chosen]):
                texts.add(text)
                chosen.append(candidate)
        method = "pool_from_other_pairs"
        if len(chosen) < style.n_options - 1:
            try:
                extra = pose_distractors(gold, style.n_options - 1 - len(chosen), rng,
                                         style.pose_decimals)  # fmt: skip
            except DistractorError:
                ctx.skip(TASK, "no distinct distractor poses")
                continue
            chosen += extra
            method = (
                "pool_from_other_pairs+perturb:pose" if len(chosen) > len(extra) else "perturb:pose"
            )
        scene = next(s for s in ctx.scenes if s.scene_id == pair.scene)
        out.append(
            Draft(
                task=TASK,
                key=key,
                images=[
                    ctx.color(scene, pair.first),
                    ctx.depth(scene, pair.first),
                    ctx.color(scene, pair.second),
                    ctx.depth(scene, pair.second),
                ],  # fmt: skip
                fields={},
                kind="text",
                candidates=[ctx.pose_text(m) for m in [gold, *chosen]],
                method=method,
                extras={
                    "camera_poses": [
                        scene.poses[pair.first].tolist(),
                        scene.poses[pair.second].tolist(),
                    ],  # fmt: skip
                    "pose_convention": POSE_CONVENTION,
                    "coord_frame": COORD_FRAME,
                    "task_extras": {
                        "translation_m": round(pair.translation_m, 6),
                        "rotation_deg": round(pair.rotation_deg, 6),
                        "overlap": round(pair.overlap, 6),
                    },  # fmt: skip
                },
                source_ids=[
                    f"{pair.scene}/frame/{pair.first}",
                    f"{pair.scene}/frame/{pair.second}",
                ],
                sources=[ctx.frame_source(scene, pair.first), ctx.frame_source(scene, pair.second)],
            )
        )
    return out
