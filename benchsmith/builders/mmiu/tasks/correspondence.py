"""``visual_correspondence_scannet``: which marked point on image 2 is REF of image 1.

Images: two frames of a pair, as PNG with the points drawn (REF on the first; A-D on the
second). REF is a pixel of view 1 with valid depth, away from the border, that view 2 sees
(reprojected with both poses, its depth agreeing with view 2's own within the tolerance); the
gold is where it lands. Distractor points are pixels of view 2 whose own 3D points are at
least :data:`MIN_3D_GAP_M` from REF's, and every two points are at least
:data:`MIN_PIXEL_GAP` of the image's shorter side apart, so the answer is never ambiguous.

Where the points sit must not give the gold away. Views of a pair are close, so the gold lands
near REF's own pixel position; distractors drawn anywhere were farther (the point nearest REF's
position was the gold 12 times in 12). So REF is a point that moves at least the pixel gap
between the views, and each distractor sits where REF would land with **another item's
motion**: REF's position plus the displacement (length and direction) of a gold drawn at
random from the task's other items. Gold and distractors are then alike in their distance from
REF's position, in their direction from it, and in where they fall in the frame (a random
direction put distractors nearer the centre than golds, and a learned model found that). Each
REF candidate of a pair gets one distractor set, kept only if it keeps every rule at that first
draw: the four motions are then one law restricted to the rules, symmetric in gold and
distractors (a set redrawn around a fixed gold until it fits kept long motions, because a short
one lands on the gold).
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
MIN_PIXEL_GAP = 0.1
BORDER = 0.1
TRIES = 2000  # REF pixels drawn per pair (one vectorised pass): each valid one gets a set


def _inside(px: np.ndarray, width: int, height: int) -> bool:
    return bool(BORDER * width <= px[0] < (1 - BORDER) * width
                and BORDER * height <= px[1] < (1 - BORDER) * height)  # fmt: skip


def reference_points(ctx: TaskContext, scene, a: int, b: int, rng) -> list[tuple]:
    """Candidate (REF pixel, its 3D point, where it lands in view b), in draw order: of
    :data:`TRIES` pixels of view a drawn away from the border, those with depth that view b
    sees inside its border and that move at least the pixel gap."""
    choice = ctx.config.frames
    depth_a, depth_b = scene.depth_m(a).astype(np.float64), scene.depth_m(b).astype(np.float64)
    height, width = depth_a.shape
    gap = MIN_PIXEL_GAP * min(width, height)
    refs = rng.uniform(BORDER, 1 - BORDER, (TRIES, 2)) * np.array([width, height])
    z = depth_a[refs[:, 1].astype(int), refs[:, 0].astype(int)]
    refs, z = refs[z > 0], z[z > 0]
    world = back_project(refs, z, scene.depth_intrinsics, scene.poses[a])
    seen, pixel = visible_in(world, depth_b, scene.depth_intrinsics, scene.poses[b],
                             choice.depth_tolerance_m)  # fmt: skip
    keep = [i for i in range(len(refs)) if seen[i] and _inside(pixel[i], width, height)
            and np.linalg.norm(pixel[i] - refs[i]) >= gap]  # fmt: skip
    return [(refs[i], world[i], pixel[i]) for i in keep]


def distractor_set(
    scene,
    b: int,
    ref: np.ndarray,
    world: np.ndarray,
    gold: np.ndarray,
    motions: np.ndarray,
    n: int,
    rng,
) -> list[np.ndarray] | None:
    """One draw of ``n - 1`` distractors, each at ``ref`` plus a gold displacement of the task
    drawn from ``motions``: the gold and them, or None when the set breaks a rule."""
    depth_b = scene.depth_m(b).astype(np.float64)
    height, width = depth_b.shape
    gap = MIN_PIXEL_GAP * min(width, height)
    points = [gold] + [ref + motions[i] for i in rng.integers(0, len(motions), n - 1)]
    if not all(_inside(px, width, height) for px in points[1:]):
        return None
    if any(np.linalg.norm(points[i] - points[j]) < gap
           for i in range(n) for j in range(i + 1, n)):  # fmt: skip
        return None
    depths = np.array([depth_b[int(px[1]), int(px[0])] for px in points[1:]])
    if (depths <= 0).any():
        return None
    where = back_project(np.array(points[1:]), depths, scene.depth_intrinsics, scene.poses[b])
    return points if (np.linalg.norm(where - world, axis=1) >= MIN_3D_GAP_M).all() else None


def drafts(ctx: TaskContext) -> list[Draft]:
    n = ctx.config.options.n_options
    pairs = ctx.pairs()
    found = []  # pass 1: every pair's REF candidates; the first one's motion joins the law
    for index in ctx.order(TASK, len(pairs)):
        scene, pair = pairs[index]
        key = f"{scene.scene_id}/{pair.first}-{pair.second}"
        rng = ctx.rng(TASK, key)
        candidates = reference_points(ctx, scene, pair.first, pair.second, rng)
        if not candidates:
            ctx.skip(TASK, "no reference point seen in both views that moves between them")
            continue
        found.append((scene, pair, key, rng, candidates))
    motions = np.array([c[0][2] - c[0][0] for *_, c in found]).reshape(-1, 2)
    out: list[Draft] = []
    for scene, pair, key, rng, candidates in found:
        if len(out) == ctx.config.items_per_task:
            break
        a, b = pair.first, pair.second
        # one distractor set per REF, kept only when it keeps every rule at the first draw:
        # the gold's and the distractors' motions are then one law restricted to the rules (a
        # set redrawn around a fixed gold until it fits keeps long motions: a short one lands
        # on the gold, and "nearest to REF" found it)
        chosen = None
        for ref, world, gold in candidates:
            chosen = distractor_set(scene, b, ref, world, gold, motions, n, rng)
            if chosen is not None:
                break
        if chosen is None:
            ctx.skip(TASK, "no distractor set that keeps the rules at its first draw")
            continue
        height, width = scene.depth_m(a).shape
        color_w, color_h = scene.info.color_size
        to_color = np.array([color_w / width, color_h / height])
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
                method="same_view_far_points_other_motions",
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
