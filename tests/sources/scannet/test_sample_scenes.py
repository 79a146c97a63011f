"""The miniature ScanNet scenes, read back with the scene readers, against their known geometry:
boxes after axisAlignment, poses in the same frame, depth that reprojects between frames."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from benchsmith.core.errors import SourceError
from benchsmith.sources.scannet.sample import (
    DEPTH_SIZE,
    FAILED_FRAME,
    N_FRAMES,
    _intrinsics,
    sample_scene_truth,
    write_sample_scannet,
)
from benchsmith.sources.scannet.scene import (
    LABELS_FILE,
    aligned_pose,
    object_boxes,
    read_label_map,
    read_scene_info,
    read_split,
    scene_file,
)
from benchsmith.sources.scannet.sens import SensReader


@pytest.fixture(scope="module")
def sample(tmp_path_factory) -> Path:
    return write_sample_scannet(tmp_path_factory.mktemp("scannet") / "ScanNet")


def scene_dir(root: Path, index: int) -> Path:
    return root / "scans" / f"scene{index:04d}_00"


@pytest.mark.parametrize("index", [0, 1])
def test_boxes_are_the_known_boxes_in_the_aligned_frame(sample, index):
    truth = sample_scene_truth(index)
    labels = read_label_map(sample / LABELS_FILE)
    boxes, unknown = object_boxes(scene_dir(sample, index), labels)
    assert unknown == []
    assert [b.label for b in boxes] == [label for label, _, _ in truth.objects]
    for box, (_, low, high) in zip(boxes, truth.objects, strict=True):
        assert np.allclose(box.center, (low + high) / 2, atol=1e-5), box
        assert np.allclose(box.size, high - low, atol=1e-5), box
        assert min(box.size) > 0 and box.category == box.label
    # the raw mesh is not aligned: the alignment really moves it
    assert not np.allclose(truth.axis_alignment, np.eye(4))


@pytest.mark.parametrize("index", [0, 1])
def test_sens_poses_put_in_the_aligned_frame_are_the_known_poses(sample, index):
    truth = sample_scene_truth(index)
    info = read_scene_info(scene_dir(sample, index))
    assert np.allclose(info.axis_alignment, truth.axis_alignment, atol=1e-8)
    with SensReader(scene_file(scene_dir(sample, index), ".sens")) as sens:
        assert sens.skipped_nonfinite == 1 and FAILED_FRAME not in sens.valid_frames
        for k in sens.valid_frames:
            assert np.allclose(aligned_pose(sens.pose(k), info), truth.poses[k], atol=1e-5), k


def backproject(depth: np.ndarray, pose: np.ndarray) -> np.ndarray:
    fx, fy, cx, cy = _intrinsics(DEPTH_SIZE)
    v, u = np.mgrid[: depth.shape[0], : depth.shape[1]] + 0.5
    camera = np.stack([(u - cx) / fx * depth, (v - cy) / fy * depth, depth], axis=-1)
    return camera @ pose[:3, :3].T + pose[:3, 3]


def test_depth_of_one_frame_reprojects_onto_the_next(sample):
    """Every pixel of frame 0 back-projected with its depth and pose lands in frame 1 at a
    depth frame 1 itself records (the scene is rigid, the poses and depths exact)."""
    info = read_scene_info(scene_dir(sample, 0))
    with SensReader(scene_file(scene_dir(sample, 0), ".sens")) as sens:
        d0, d1 = sens.depth_metres(0).astype(np.float64), sens.depth_metres(1).astype(np.float64)
        p0, p1 = aligned_pose(sens.pose(0), info), aligned_pose(sens.pose(1), info)
    points = backproject(d0, p0).reshape(-1, 3)
    camera = (points - p1[:3, 3]) @ p1[:3, :3]  # world -> camera 1
    fx, fy, cx, cy = _intrinsics(DEPTH_SIZE)
    u = np.floor(camera[:, 0] / camera[:, 2] * fx + cx).astype(int)
    v = np.floor(camera[:, 1] / camera[:, 2] * fy + cy).astype(int)
    inside = (u >= 0) & (u < DEPTH_SIZE[0]) & (v >= 0) & (v < DEPTH_SIZE[1])
    assert inside.mean() > 0.8  # neighbouring frames overlap
    error = np.abs(d1[v[inside], u[inside]] - camera[inside, 2])
    assert np.median(error) < 0.03 and (error < 0.1).mean() > 0.9  # pixel-grid sampling


def surface_distance(points: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Distance of each point to the surface of the box [low, high]."""
    outside = np.linalg.norm(np.maximum(np.maximum(low - points, points - high), 0), axis=1)
    inside = np.minimum(points - low, high - points).min(axis=1)
    return np.where(outside > 0, outside, np.abs(inside))


@pytest.mark.parametrize("index", [0, 1])
def test_every_depth_pixel_lies_on_a_known_surface(sample, index):
    """Depth and pose together put every pixel on a face of the room or of a box, to within
    the millimetre the uint16 depth keeps: depth, intrinsics and poses are exact."""
    from benchsmith.sources.scannet.sample import ROOM

    truth = sample_scene_truth(index)
    info = read_scene_info(scene_dir(sample, index))
    with SensReader(scene_file(scene_dir(sample, index), ".sens")) as sens:
        for k in sens.valid_frames:
            points = backproject(
                sens.depth_metres(k).astype(np.float64), aligned_pose(sens.pose(k), info)
            ).reshape(-1, 3)
            distance = surface_distance(points, *ROOM)
            for _, low, high in truth.objects:
                distance = np.minimum(distance, surface_distance(points, low, high))
            assert distance.max() < 0.002, (k, distance.max())


def _cast_by_reductions(truth, pose: np.ndarray, size: tuple[int, int]):
    """The ray cast written the plain way: x, y, z as a last axis, reduced with min, max,
    argmin and argmax (numpy's tie and NaN rules)."""
    from benchsmith.sources.scannet.sample import OBJECT_COLOURS, ROOM

    fx, fy, cx, cy = _intrinsics(size)
    u, v = np.meshgrid(np.arange(size[0]) + 0.5, np.arange(size[1]) + 0.5)
    direction = np.stack([(u - cx) / fx, (v - cy) / fy, np.ones_like(u)], -1) @ pose[:3, :3].T
    origin = pose[:3, 3]
    with np.errstate(divide="ignore", invalid="ignore"):
        room = np.maximum((ROOM[0] - origin) / direction, (ROOM[1] - origin) / direction)
    depth, axis = room.min(axis=-1), room.argmin(axis=-1)
    hit = origin + direction * depth[..., None]
    floor = (axis == 2) & (hit[..., 2] < 0.01)
    checker = (np.floor(hit[..., 0] * 2) + np.floor(hit[..., 1] * 2)) % 2
    rgb = np.where(floor[..., None], np.where(checker[..., None] > 0, 170, 120), 215.0)
    rgb = rgb * np.ones(3) * np.array([1.0, 0.97, 0.9])
    for label, low, high in truth.objects:
        with np.errstate(divide="ignore", invalid="ignore"):
            t1, t2 = (low - origin) / direction, (high - origin) / direction
        near, far = np.minimum(t1, t2), np.maximum(t1, t2)
        enter, leave = near.max(axis=-1), far.min(axis=-1)
        closer = (enter > 0) & (enter <= leave) & (enter < depth)
        shade = np.array([0.8, 0.65, 1.0])[near.argmax(axis=-1)]
        depth = np.where(closer, enter, depth)
        colour = np.array(OBJECT_COLOURS[label], dtype=np.float64)
        rgb = np.where(closer[..., None], colour * shade[..., None], rgb)
    return depth, np.clip(np.rint(rgb), 0, 255).astype(np.uint8)


@pytest.mark.parametrize("index", [0, 1])
def test_the_per_axis_ray_cast_gives_the_plain_casts_bytes(index):
    """The sample's ray cast keeps x, y and z as separate arrays (three times as fast); its
    depth and colours are bit for bit those of the plain per-pixel reductions, in every frame
    at both sizes and at an odd size."""
    from benchsmith.sources.scannet.sample import COLOR_SIZE, ray_cast

    truth = sample_scene_truth(index)
    for k, pose in enumerate(truth.poses):
        view = pose if np.isfinite(pose).all() else truth.poses[k - 1]
        for size in (COLOR_SIZE, DEPTH_SIZE, (37, 23)):
            depth, rgb = ray_cast(truth, view, size)
            plain_depth, plain_rgb = _cast_by_reductions(truth, view, size)
            assert depth.tobytes() == plain_depth.tobytes(), (k, size)
            assert rgb.dtype == plain_rgb.dtype and rgb.tobytes() == plain_rgb.tobytes(), (k, size)


def test_labels_splits_and_deterministic_bytes(sample, tmp_path):
    labels = read_label_map(sample / LABELS_FILE)
    assert labels["chair"] == ("chair", "chair")
    assert read_split(sample / "Tasks/Benchmark/scannetv2_train.txt") == ["scene0000_00"]
    assert read_split(sample / "Tasks/Benchmark/scannetv2_val.txt") == ["scene0001_00"]
    again = write_sample_scannet(tmp_path / "again")

    def digests(root: Path) -> dict[str, str]:
        return {
            p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in root.rglob("*")
            if p.is_file()
        }

    assert digests(again) == digests(sample)


def test_bad_scene_files_name_the_file(sample, tmp_path):
    broken = Path(shutil.copytree(scene_dir(sample, 0), tmp_path / "scene0000_00"))
    labels = read_label_map(sample / LABELS_FILE)
    ply = scene_file(broken, "_vh_clean_2.ply")
    ply.write_bytes(ply.read_bytes()[:300])
    with pytest.raises(SourceError, match="PLY mesh does not parse") as error:
        object_boxes(broken, labels)
    assert "_vh_clean_2.ply" in str(error.value)
    shutil.copy(scene_file(scene_dir(sample, 0), "_vh_clean_2.ply"), ply)
    segs = scene_file(broken, "_vh_clean_2.0.010000.segs.json")
    data = json.loads(segs.read_text())
    segs.write_text(json.dumps({**data, "segIndices": data["segIndices"][:-1]}))
    with pytest.raises(SourceError, match="segIndices has"):
        object_boxes(broken, labels)
    shutil.copy(scene_file(scene_dir(sample, 0), "_vh_clean_2.0.010000.segs.json"), segs)
    scene_file(broken, ".aggregation.json").unlink()
    with pytest.raises(SourceError, match="scene file missing") as error:
        object_boxes(broken, labels)
    assert "scene0000_00.aggregation.json" in str(error.value)
    shutil.copy(scene_file(scene_dir(sample, 0), ".aggregation.json"), broken)
    # a label the tsv lacks keeps its box, with no category, and is reported
    without_chair = {k: v for k, v in labels.items() if k != "chair"}
    boxes, unknown = object_boxes(broken, without_chair)
    assert set(unknown) == {"chair"} and next(b for b in boxes if b.label == "chair").category == ""
    info = scene_file(broken, ".txt")
    info.write_text(info.read_text().replace("axisAlignment = ", "axisAlignment = 1 2 "))
    with pytest.raises(SourceError, match="axisAlignment must be 16 numbers"):
        read_scene_info(broken)


def test_source_verbs_check_and_link_from_the_cli(sample, tmp_path, capsys):
    """`benchsmith source check scannet` reports what it read; a folder that is not ScanNet,
    or a scene whose stream is cut short, is an error naming the file."""
    from benchsmith.cli import main

    assert main(["source", "check", "scannet", str(sample)]) == 0
    summary = capsys.readouterr().out
    assert "scenes" in summary and "frames_with_non_finite_pose" in summary
    assert main(["source", "link", "scannet", str(tmp_path), "--out", str(tmp_path / "o")]) == 2
    assert "not a ScanNet v2 folder" in capsys.readouterr().err
    copy = Path(shutil.copytree(sample, tmp_path / "copy"))
    sens = scene_file(scene_dir(copy, 1), ".sens")
    sens.write_bytes(sens.read_bytes()[:-100])
    assert main(["source", "check", "scannet", str(copy)]) == 2
    err = capsys.readouterr().err
    assert f"truncated .sens file: frame {N_FRAMES - 1}" in err and "scene0001_00.sens" in err
