"""Write miniature ScanNet v2 scenes in the real formats, from geometry known exactly.

Each scene is a room (an axis-aligned box in the *aligned* frame) holding a few axis-aligned
boxes (chair, table, ...). The files are what ScanNet ships, in ScanNet's raw frame, which is
the aligned frame moved by the inverse of the scene's ``axisAlignment`` (a yaw and a shift):

- ``sceneXXXX_00.sens`` (v4): frames whose colour (JPEG) and depth (zlib ``uint16``, mm) are
  ray-cast from the known boxes at known camera poses, so depth and poses are exact and every
  pixel's 3D point is known; one frame carries ScanNet's ``-inf`` tracking-failure pose;
- ``_vh_clean_2.ply`` (binary, plyfile): the boxes and the floor as triangles, with colours;
- ``_vh_clean_2.0.010000.segs.json``, ``.aggregation.json``: one segment per box, one object per
  segment, labelled;
- ``sceneXXXX_00.txt``: ``axisAlignment``, colour intrinsics and sizes;
- ``scannetv2-labels.combined.tsv`` and ``Tasks/Benchmark/scannetv2_{train,val,test}.txt``.

:func:`sample_scene_truth` gives the same geometry for tests: boxes and poses in the aligned
frame, so every label a builder derives can be checked against ground truth.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchsmith.core.atomic import atomic_directory
from benchsmith.sources.scannet.scene import (
    AGGREGATION_SUFFIX,
    LABELS_FILE,
    MESH_SUFFIX,
    SEGS_SUFFIX,
)
from benchsmith.sources.scannet.sens_writer import SensFrameData, SensStreamInfo, write_sens

ROOM = (np.array([0.0, 0.0, 0.0]), np.array([4.0, 3.0, 2.5]))
COLOR_SIZE, DEPTH_SIZE = (160, 120), (80, 60)
FOCAL = 130.0  # colour focal length in pixels (about 63 degrees across)
N_FRAMES = 30  # a 90-degree sweep round the room, about 7 cm and 3-4 degrees per frame
FAILED_FRAME = 6  # the frame whose pose is ScanNet's -inf tracking failure
DEPTH_SHIFT = 1000.0
FRAME_STEP_US = 33_333
OBJECT_COLOURS = {
    "chair": (200, 60, 40),
    "table": (150, 100, 50),
    "bookshelf": (60, 90, 170),
    "cabinet": (90, 160, 80),
}
LABEL_ROWS = [  # raw_category, category, nyu40id, nyu40class
    ("chair", "chair", 5, "chair"),
    ("table", "table", 7, "table"),
    ("bookshelf", "bookshelf", 10, "bookshelf"),
    ("cabinet", "cabinet", 3, "cabinet"),
    ("floor", "floor", 2, "floor"),
]
TSV_HEADER = ["id", "raw_category", "category", "count", "nyu40id", "eigen13id", "nyuClass",
              "nyu40class", "eigen13class", "ModelNet40", "ModelNet10", "ShapeNetCore55",
              "synsetoffset", "wnsynsetid", "wnsynsetkey", "mpcat40index", "mpcat40"]  # fmt: skip


@dataclass(frozen=True)
class SampleSceneTruth:
    scene_id: str
    axis_alignment: np.ndarray  # raw -> aligned
    objects: tuple[tuple[str, np.ndarray, np.ndarray], ...]  # (label, low, high), aligned frame
    poses: list[np.ndarray]  # camera -> aligned world, one per frame (a -inf one included)

    def raw_pose(self, index: int) -> np.ndarray:
        return np.linalg.inv(self.axis_alignment) @ self.poses[index]


def look_at(position: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Camera -> world for a camera at ``position`` looking at ``target`` (x right, y down)."""
    forward = (target - position) / np.linalg.norm(target - position)
    right = np.cross(forward, (0.0, 0.0, 1.0))
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    pose = np.eye(4)
    pose[:3, :3] = np.stack([right, down, forward], axis=1)
    pose[:3, 3] = position
    return pose


SIZES = {"chair": (0.5, 0.5, 0.9), "table": (1.2, 0.8, 0.75), "bookshelf": (0.4, 1.0, 1.8),
         "cabinet": (0.6, 0.5, 1.0)}  # fmt: skip
CLEARANCE = 0.15  # metres kept free between two objects' footprints


def _free(low: np.ndarray, high: np.ndarray, placed: list) -> bool:
    return all(
        high[0] + CLEARANCE <= other_low[0] or other_high[0] + CLEARANCE <= low[0]
        or high[1] + CLEARANCE <= other_low[1] or other_high[1] + CLEARANCE <= low[1]
        for _, other_low, other_high in placed
    )  # fmt: skip


def _clear_of(low: np.ndarray, high: np.ndarray, cameras: np.ndarray, margin: float = 0.3) -> bool:
    """A box taller than the camera keeps ``margin`` metres from every camera position."""
    nearest = np.clip(cameras[:, :2], low[:2], high[:2])
    return bool((np.linalg.norm(cameras[:, :2] - nearest, axis=1) >= margin).all())


def place_objects(rng: np.random.Generator, index: int, cameras: np.ndarray) -> tuple:
    """A table, a bookshelf, one to three chairs and (odd scenes) a cabinet, each at a seeded
    free spot of the floor: layouts differ from scene to scene, and a category can have several
    objects, as in ScanNet (one object per category at a fixed spot let a model answer 3D
    object detection from the category alone)."""
    wanted = ["table", "bookshelf"] + ["chair"] * int(rng.integers(1, 4))
    if index % 2:
        wanted.append("cabinet")
    placed: list = []
    for label in wanted:
        size = np.array(SIZES[label])
        if rng.integers(2):  # either way round
            size = size[[1, 0, 2]]
        for _ in range(500):
            centre = np.array([rng.uniform(ROOM[0][0] + size[0] / 2 + 0.05,
                                           ROOM[1][0] - size[0] / 2 - 0.05),
                               rng.uniform(ROOM[0][1] + size[1] / 2 + 0.05,
                                           ROOM[1][1] - size[1] / 2 - 0.05), 0.0])  # fmt: skip
            low = np.round(centre - np.array([size[0] / 2, size[1] / 2, 0.0]), 3)
            high = np.round(low + size, 3)
            tall = high[2] > cameras[:, 2].min() - 0.1
            if _free(low, high, placed) and (not tall or _clear_of(low, high, cameras)):
                placed.append((label, low, high))
                break
    return tuple(placed)


def sample_scene_truth(index: int, seed: int = 0, n_frames: int = N_FRAMES) -> SampleSceneTruth:
    """Scene ``index``'s geometry: boxes placed per scene, a camera sweeping round the room in
    uneven steps (its height and gaze wander, so relative poses differ in every axis) and one
    failed (``-inf``) pose."""
    rng = np.random.default_rng([seed, index])
    yaw = np.radians(20.0 + 25.0 * index)
    alignment = np.eye(4)
    alignment[:2, :2] = [[np.cos(yaw), -np.sin(yaw)], [np.sin(yaw), np.cos(yaw)]]
    alignment[:3, 3] = (0.7 + 0.3 * index, -1.1, 0.0)
    poses = []
    phase = rng.uniform(0, 2 * np.pi)
    for k in range(n_frames):
        angle = np.radians(-120.0 + 3.0 * k + 1.2 * np.sin(k + phase))
        height = 1.4 + 0.08 * np.sin(k / 2.5 + phase)
        position = np.array([2.0 + 1.6 * np.cos(angle), 1.5 + 1.2 * np.sin(angle), height])
        target = np.array([2.2 + 0.3 * np.sin(k / 4), 1.5 + 0.2 * np.cos(k / 5), 0.6])
        poses.append(look_at(position, target))
    objects = place_objects(rng, index, np.array([pose[:3, 3] for pose in poses]))
    if n_frames > FAILED_FRAME:
        poses[FAILED_FRAME] = np.full((4, 4), -np.inf)  # a tracking failure, as ScanNet has
    return SampleSceneTruth(f"scene{index:04d}_00", alignment, objects, poses)


def _intrinsics(size: tuple[int, int]) -> tuple[float, float, float, float]:
    scale = size[0] / COLOR_SIZE[0]
    return FOCAL * scale, FOCAL * scale, size[0] / 2, size[1] / 2


FACE_SHADE = (0.8, 0.65, 1.0)  # a box face lit by its axis: x, y, z (top)


def _first_extreme(values: list[np.ndarray], better) -> np.ndarray:
    """Which of three arrays holds the extreme at each pixel (0, 1 or 2), by numpy's
    ``argmin``/``argmax`` rules: a NaN counts as the extreme and the first one wins a tie."""
    index = np.zeros(values[0].shape, dtype=np.intp)
    best = values[0]
    for k in (1, 2):
        take = better(values[k], best) | (np.isnan(values[k]) & ~np.isnan(best))
        index = np.where(take, k, index)
        best = np.where(take, values[k], best)
    return index


def ray_cast(truth: SampleSceneTruth, pose: np.ndarray, size: tuple[int, int]):
    """(z-depth in metres, RGB) of every pixel of a pinhole view of the scene (aligned frame).

    Each axis is its own (H, W) array: reductions over a last axis of length 3 cost numpy
    more than the arithmetic (three times as long over a sample scene); the values, ties and
    NaNs included, are those of the per-pixel min/max/argmin over x, y, z."""
    fx, fy, cx, cy = _intrinsics(size)
    u, v = np.meshgrid(np.arange(size[0]) + 0.5, np.arange(size[1]) + 0.5)
    rays = np.stack([(u - cx) / fx, (v - cy) / fy, np.ones_like(u)], axis=-1)  # z = 1: t is depth
    direction = np.moveaxis(rays @ pose[:3, :3].T, -1, 0).copy()  # (3, H, W)
    origin = pose[:3, 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        room_t = [np.maximum((ROOM[0][a] - origin[a]) / direction[a],
                             (ROOM[1][a] - origin[a]) / direction[a]) for a in range(3)]  # fmt: skip
    depth = np.minimum(np.minimum(room_t[0], room_t[1]), room_t[2])
    axis = _first_extreme(room_t, np.less)
    hit = [origin[a] + direction[a] * depth for a in range(3)]
    floor = (axis == 2) & (hit[2] < 0.01)
    checker = (np.floor(hit[0] * 2) + np.floor(hit[1] * 2)) % 2
    base = np.where(floor, np.where(checker > 0, 170, 120), 215.0)
    rgb = [base * 1.0 * tint for tint in (1.0, 0.97, 0.9)]
    for label, low, high in truth.objects:
        with np.errstate(divide="ignore", invalid="ignore"):
            t1 = [(low[a] - origin[a]) / direction[a] for a in range(3)]
            t2 = [(high[a] - origin[a]) / direction[a] for a in range(3)]
        near = [np.minimum(a, b) for a, b in zip(t1, t2, strict=True)]
        far = [np.maximum(a, b) for a, b in zip(t1, t2, strict=True)]
        enter = np.maximum(np.maximum(near[0], near[1]), near[2])
        leave = np.minimum(np.minimum(far[0], far[1]), far[2])
        closer = (enter > 0) & (enter <= leave) & (enter < depth)
        shade = np.asarray(FACE_SHADE)[_first_extreme(near, np.greater)]
        depth = np.where(closer, enter, depth)
        colour = OBJECT_COLOURS[label]
        rgb = [np.where(closer, float(colour[c]) * shade, rgb[c]) for c in range(3)]
    image = np.stack([np.clip(np.rint(channel), 0, 255) for channel in rgb], axis=-1)
    return depth, image.astype(np.uint8)


def _box_mesh(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, list[list[int]]]:
    corners = np.array([[x, y, z] for z in (low[2], high[2]) for y in (low[1], high[1])
                        for x in (low[0], high[0])])  # fmt: skip
    quads = [(0, 1, 3, 2), (4, 6, 7, 5), (0, 4, 5, 1), (2, 3, 7, 6), (0, 2, 6, 4), (1, 5, 7, 3)]
    return corners, [[a, b, c] for a, b, c, d in quads] + [[a, c, d] for a, b, c, d in quads]


def write_mesh(path: Path, truth: SampleSceneTruth) -> list[tuple[str, int]]:
    """The boxes and the floor as one binary PLY in the raw frame; returns (label, segment) per
    vertex group in vertex order."""
    from plyfile import PlyData, PlyElement

    to_raw = np.linalg.inv(truth.axis_alignment)
    parts = [("floor", *ROOM), *truth.objects]
    vertices, faces, segments = [], [], []
    for segment, (label, low, high) in enumerate(parts):
        high = np.array([high[0], high[1], 0.0]) if label == "floor" else high
        corners, triangles = _box_mesh(low, high)
        base = sum(len(v) for v in vertices)
        raw = (np.c_[corners, np.ones(8)] @ to_raw.T)[:, :3]
        colour = OBJECT_COLOURS.get(label, (140, 140, 140))
        vertices.append([(*p, *colour, 255) for p in raw])
        faces.extend([([base + i for i in tri],) for tri in triangles])
        segments.append((label, segment))
    vertex = np.array(
        [row for part in vertices for row in part],
        dtype=[
            ("x", "f4"),
            ("y", "f4"),
            ("z", "f4"),
            ("red", "u1"),
            ("green", "u1"),
            ("blue", "u1"),
            ("alpha", "u1"),
        ],  # fmt: skip
    )
    face = np.array(faces, dtype=[("vertex_indices", "i4", (3,))])
    PlyData([PlyElement.describe(vertex, "vertex"), PlyElement.describe(face, "face")],
            text=False).write(str(path))  # fmt: skip
    return segments


def write_scene(scene_dir: Path, truth: SampleSceneTruth) -> None:
    """Every file of one scene (the geometry, seed included, is already in ``truth``)."""
    scene_dir.mkdir(parents=True)
    name = truth.scene_id
    segments = write_mesh(scene_dir / f"{name}{MESH_SUFFIX}", truth)
    per_vertex = [segment for _, segment in segments for _ in range(8)]
    (scene_dir / f"{name}{SEGS_SUFFIX}").write_text(json.dumps(
        {"params": {"kThresh": "0.0001", "segMinVerts": "20"}, "sceneId": name,
         "segIndices": per_vertex}))  # fmt: skip
    groups = [
        {"id": k, "objectId": k, "segments": [segment], "label": label}
        for k, (label, segment) in enumerate(s for s in segments if s[0] != "floor")
    ]
    (scene_dir / f"{name}{AGGREGATION_SUFFIX}").write_text(json.dumps(
        {"sceneId": f"scannet.{name}", "appId": "Aggregator.v2", "segGroups": groups,
         "segmentsFile": f"scannet.{name}{SEGS_SUFFIX}"}))  # fmt: skip
    fx, fy, cx, cy = _intrinsics(COLOR_SIZE)
    alignment = " ".join(f"{v:.9f}" for v in truth.axis_alignment.reshape(-1))
    lines = [f"axisAlignment = {alignment}", f"colorHeight = {COLOR_SIZE[1]}",
             f"colorWidth = {COLOR_SIZE[0]}", f"depthHeight = {DEPTH_SIZE[1]}",
             f"depthWidth = {DEPTH_SIZE[0]}", f"fx_color = {fx:.6f}", f"fy_color = {fy:.6f}",
             f"mx_color = {cx:.6f}", f"my_color = {cy:.6f}",
             f"numColorFrames = {len(truth.poses)}", f"numDepthFrames = {len(truth.poses)}",
             "sceneType = Office"]  # fmt: skip
    (scene_dir / f"{name}.txt").write_text("\n".join(lines) + "\n")
    frames = []
    for k, pose in enumerate(truth.poses):
        finite = np.isfinite(pose).all()
        view = pose if finite else truth.poses[k - 1]  # a failed pose still has images
        depth, _ = ray_cast(truth, view, DEPTH_SIZE)
        _, rgb = ray_cast(truth, view, COLOR_SIZE)
        raw = truth.raw_pose(k) if finite else pose
        frames.append(SensFrameData(raw, rgb, np.rint(depth * DEPTH_SHIFT).astype(np.uint16),
                                    k * FRAME_STEP_US, k * FRAME_STEP_US + 5))  # fmt: skip
    intrinsic = lambda size: np.array(  # noqa: E731
        [[_intrinsics(size)[0], 0, size[0] / 2, 0], [0, _intrinsics(size)[1], size[1] / 2, 0],
         [0, 0, 1, 0], [0, 0, 0, 1]], dtype=np.float32)  # fmt: skip
    info = SensStreamInfo(COLOR_SIZE, DEPTH_SIZE, intrinsic(COLOR_SIZE), intrinsic(DEPTH_SIZE),
                          depth_shift=DEPTH_SHIFT)  # fmt: skip
    write_sens(scene_dir / f"{name}.sens", info, frames)


def write_sample_scannet(
    out_dir: str | Path, n_scenes: int = 2, seed: int = 0, n_frames: int = N_FRAMES
) -> Path:
    """``out_dir/scans/sceneXXXX_00/...``, the label tsv and the split lists, written whole."""
    out_dir = Path(out_dir)
    truths = [sample_scene_truth(i, seed, n_frames) for i in range(n_scenes)]
    with atomic_directory(out_dir) as staging:
        for truth in truths:
            write_scene(staging / "scans" / truth.scene_id, truth)
        rows = ["\t".join(TSV_HEADER)] + [
            "\t".join([str(k + 1), raw, category, "10", str(nyu), "", "", nyu_class]
                      + [""] * (len(TSV_HEADER) - 8))
            for k, (raw, category, nyu, nyu_class) in enumerate(LABEL_ROWS)
        ]  # fmt: skip
        (staging / LABELS_FILE).write_text("\n".join(rows) + "\n")
        benchmark = staging / "Tasks" / "Benchmark"
        benchmark.mkdir(parents=True)
        ids = [t.scene_id for t in truths]
        splits = {"train": ids[:-1] or ids, "val": ids[-1:], "test": []}
        for split, scenes in splits.items():
            (benchmark / f"scannetv2_{split}.txt").write_text("".join(f"{s}\n" for s in scenes))
    return out_dir
