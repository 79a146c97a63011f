"""ScanNet scenes as the MMIU tasks see them: aligned poses, depth, boxes, chosen frame pairs.

Scenes come from ``scans/`` (all of them, or those of one ScanNet split list), in sorted
order. Frames with a non-finite pose are skipped (counted by the reader). A scene that cannot
be read (no aggregation file, a PLY that does not parse, a label missing from the tsv when
boxes are asked for) is an error naming the file; a scene without a usable frame pair is a
counted skip for the tasks that need pairs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

from benchsmith.builders.mmiu.config import FrameChoice
from benchsmith.builders.mmiu.geometry import Intrinsics, depth_overlap, pose_distance
from benchsmith.builders.mmiu.images import ImageSources
from benchsmith.core.errors import SourceError
from benchsmith.sources.scannet.scene import (
    LABELS_FILE,
    ObjectBox,
    SceneInfo,
    aligned_pose,
    object_boxes,
    read_label_map,
    read_mesh_vertices,
    read_scene_info,
    read_split,
)

SPLIT_FIX = "use split: all, or a ScanNet copy with Tasks/Benchmark/scannetv2_<split>.txt"


def scene_ids(root: Path, split: str) -> list[str]:
    scans = root / "scans"
    if not scans.is_dir():
        raise SourceError(
            "no scans/ folder", path=scans, fix="run `benchsmith source prepare scannet`"
        )
    present = sorted(p.name for p in scans.iterdir() if p.is_dir())
    if split == "all":
        return present
    listed = read_split(root / "Tasks" / "Benchmark" / f"scannetv2_{split}.txt")
    missing = [s for s in listed if s not in present]
    if missing:
        raise SourceError(
            f"{len(missing)} scene(s) of the {split} list are not in scans/ (e.g. {missing[0]})",
            path=scans,
            fix="fetch those scenes, or choose mmiu.scene_split: all",
        )
    return sorted(listed)


@dataclass
class Scene:
    """One scene: poses in the aligned frame (valid frames only) and lazily read depth."""

    scene_id: str
    directory: Path
    info: SceneInfo
    poses: dict[int, np.ndarray]
    depth_intrinsics: Intrinsics
    sources: ImageSources
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def frames(self) -> list[int]:
        return sorted(self.poses)

    def depth_m(self, frame: int) -> np.ndarray:
        return self.sources.depth_m(self.scene_id, frame)

    @cached_property
    def boxes(self) -> list[ObjectBox]:
        boxes, unknown = object_boxes(self.directory, self.labels)
        if unknown:
            raise SourceError(
                f"label(s) {sorted(set(unknown))} of this scene are not in {LABELS_FILE}",
                path=self.directory / f"{self.scene_id}.aggregation.json",
                fix=f"use the {LABELS_FILE} of your ScanNet release (it lists every label)",
            )
        return boxes

    def distance(self, a: int, b: int) -> tuple[float, float]:
        return pose_distance(self.poses[a], self.poses[b])

    @cached_property
    def room_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """(min, max) corner of the scene's mesh in the aligned frame: where objects can be."""
        vertices = read_mesh_vertices(self.directory)
        aligned = (np.c_[vertices, np.ones(len(vertices))] @ self.info.axis_alignment.T)[:, :3]
        return aligned.min(axis=0), aligned.max(axis=0)


def load_scene(root: Path, scene_id: str, sources: ImageSources, labels) -> Scene:
    directory = root / "scans" / scene_id
    info = read_scene_info(directory)
    reader = sources.reader(scene_id)
    fx, fy, cx, cy = (float(reader.header.intrinsic_depth[i, j]) for i, j in
                      ((0, 0), (1, 1), (0, 2), (1, 2)))  # fmt: skip
    poses = {k: aligned_pose(reader.pose(k), info) for k in reader.valid_frames}
    return Scene(scene_id, directory, info, poses, (fx, fy, cx, cy), sources, labels)


def scene_labels(root: Path) -> dict[str, tuple[str, str]]:
    """The label map every scene's boxes are named with (checked before any stream is read)."""
    labels_path = root / LABELS_FILE
    labels = read_label_map(labels_path) if labels_path.is_file() else {}
    if not labels:
        raise SourceError("label map missing", path=labels_path, fix=SPLIT_FIX)
    return labels


def load_scenes(
    root: Path, split: str, sources: ImageSources, labels: dict[str, tuple[str, str]]
) -> list[Scene]:
    """The scenes of ``split``, their streams opened through ``sources`` (with the indexes the
    survey adopted there, no stream is walked again)."""
    return [load_scene(root, s, sources, labels) for s in scene_ids(root, split)]


@dataclass(frozen=True)
class FramePair:
    scene: str
    first: int
    second: int
    translation_m: float
    rotation_deg: float
    overlap: float


def within_limits(scene: Scene, a: int, b: int, choice: FrameChoice) -> bool:
    translation, rotation = scene.distance(a, b)
    return (
        choice.min_translation_m <= translation <= choice.max_translation_m
        and rotation <= choice.max_rotation_deg
    )


def overlap(scene: Scene, a: int, b: int, choice: FrameChoice) -> float:
    return depth_overlap(
        scene.depth_m(a),
        scene.poses[a],
        scene.depth_m(b),
        scene.poses[b],
        scene.depth_intrinsics,
        choice.depth_tolerance_m,
    )


def frame_pairs(scene: Scene, choice: FrameChoice) -> Iterator[FramePair]:
    """Frames ``i, i + stride`` (both with finite poses) moving within the limits and
    overlapping by depth reprojection, in frame order."""
    for first in scene.frames:
        second = first + choice.stride
        if second not in scene.poses or not within_limits(scene, first, second, choice):
            continue
        shared = overlap(scene, first, second, choice)
        if shared >= choice.min_overlap:
            translation, rotation = scene.distance(first, second)
            yield FramePair(scene.scene_id, first, second, translation, rotation, shared)


def far_frames(scene: Scene, used: list[int], choice: FrameChoice) -> list[int]:
    """Frames of the scene far from every frame in ``used`` (by translation or rotation)."""
    out = []
    for frame in scene.frames:
        distances = [scene.distance(frame, u) for u in used]
        if all(
            t >= choice.distractor_min_translation_m or r >= choice.distractor_min_rotation_deg
            for t, r in distances
        ):
            out.append(frame)
    return out
