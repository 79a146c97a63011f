"""``3d_scene_reconstruction``: which candidate colour image was taken at a stated pose.

Images: colour and depth of views A and B (a frame pair), then the candidates. The query is
a frame one to :data:`MAX_QUERY_STRIDES` strides after B (within the pose limits of B,
overlapping it): always one stride made the gold the candidate most like view B. Every candidate is
a colour frame of one stream: same size, same JPEG encoding (the original's gold was the only
``.jpg``).

Distractors are frames of the same scene far from the query's pose (by translation or
rotation, so the stated pose picks one candidate), other than A and B, chosen so that **how
much they look like the reference views is distributed like the golds'**: the query, one
stride after B, looks like B, and far frames did not (the candidate most like a reference was
the gold 11 times in 12). Each item's golds give a likeness vector (likeness to the more
alike of colour A and B, to B's depth: :mod:`..likeness`; the JPEG's size in kB); for every distractor the
item draws another item's gold vector at random and takes the unused frame whose own vector
is nearest to it.
"""

from __future__ import annotations

import numpy as np

from benchsmith.builders.mmiu.images import render_image
from benchsmith.builders.mmiu.items import Draft
from benchsmith.builders.mmiu.likeness import likeness, thumbnail
from benchsmith.builders.mmiu.prompts import COORD_FRAME, POSE_CONVENTION
from benchsmith.builders.mmiu.scenes import Scene, overlap, within_limits
from benchsmith.builders.mmiu.tasks.context import TaskContext

TASK = "3d_scene_reconstruction"


MAX_QUERY_STRIDES = 3
POSE_MARGIN = 0.5  # of the distractor distances in `frames`: near B, yet clearly not at pose q


def distinct_pose(scene: Scene, frame: int, query: int, choice) -> bool:
    """Whether ``frame`` is far enough from the query's pose that the stated pose tells them
    apart: half the usual distractor distance in translation or rotation."""
    translation, rotation = scene.distance(frame, query)
    return (translation >= POSE_MARGIN * choice.distractor_min_translation_m
            or rotation >= POSE_MARGIN * choice.distractor_min_rotation_deg)  # fmt: skip


class Thumbnails:
    """Colour and depth thumbnails of a scene's frames, rendered as published, each once."""

    def __init__(self, ctx: TaskContext) -> None:
        self.ctx = ctx
        self.cache: dict[tuple[str, str, int], np.ndarray] = {}
        self.kilobytes: dict[tuple[str, int], float] = {}

    def get(self, kind: str, scene: Scene, frame: int) -> np.ndarray:
        key = (kind, scene.scene_id, frame)
        if key not in self.cache:
            ref = self.ctx.color(scene, frame) if kind == "color" else self.ctx.depth(scene, frame)
            data = render_image(ref, self.ctx.sources)
            self.cache[key] = thumbnail(data)
            if kind == "color":
                self.kilobytes[(scene.scene_id, frame)] = len(data) / 1000
        return self.cache[key]

    def vector(self, scene: Scene, frame: int, a: int, b: int) -> np.ndarray:
        """What a cheap rule would compare: the frame colour's likeness to the more alike of
        colour A and B, and to B's depth; its size in kB (half weight)."""
        mine = self.get("color", scene, frame)
        colour = max(likeness(mine, self.get("color", scene, f)) for f in (a, b))
        depth = likeness(mine, self.get("depth", scene, b))
        return np.array([colour, depth, 0.5 * self.kilobytes[(scene.scene_id, frame)]])


def drafts(ctx: TaskContext) -> list[Draft]:
    choice, n = ctx.config.frames, ctx.config.options.n_options
    triples = []
    for scene, pair in ctx.pairs():
        for strides in range(1, MAX_QUERY_STRIDES + 1):
            query = pair.second + strides * choice.stride
            if (
                query in scene.poses
                and within_limits(scene, pair.second, query, choice)
                and overlap(scene, pair.second, query, choice) >= choice.min_overlap
            ):
                triples.append((scene, pair.first, pair.second, query))
    thumbs = Thumbnails(ctx)
    order = ctx.order(TASK, len(triples))

    def gold_vector(index: int) -> np.ndarray:
        scene, a, b, q = triples[index]
        return thumbs.vector(scene, q, a, b)

    # the golds the distractors imitate: the items this task will most likely make
    golds = np.array([gold_vector(i) for i in order[: 4 * ctx.config.items_per_task]])
    out: list[Draft] = []
    for index in order:
        if len(out) == ctx.config.items_per_task:
            break
        scene, a, b, q = triples[index]
        key = f"{scene.scene_id}/{a}-{b}-{q}"
        rng = ctx.rng(TASK, key)
        pool = [f for f in scene.frames if f != q and distinct_pose(scene, f, q, choice)]
        if len(pool) < n - 1:
            ctx.skip(TASK, "too few far frames in the scene for distractors")
            continue
        vectors = np.array([thumbs.vector(scene, f, a, b) for f in pool])
        picked: list[int] = []
        for target in rng.integers(0, len(golds), n - 1).tolist():
            distance = np.linalg.norm(vectors - golds[target], axis=1)
            distance[[pool.index(f) for f in picked]] = np.inf
            picked.append(pool[int(np.argmin(distance))])
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
                method="same_scene_far_frames_matched_likeness",
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
