"""Camera geometry on the known sample scenes: relative poses, projection, overlap."""

from __future__ import annotations

import numpy as np

from benchsmith.builders.mmiu.geometry import (
    back_project,
    depth_overlap,
    pose_distance,
    project,
    relative_pose,
    rotation_deg,
)
from benchsmith.sources.scannet.sample import DEPTH_SIZE, _intrinsics, ray_cast, sample_scene_truth


def test_relative_pose_moves_points_from_the_first_camera_to_the_second():
    truth = sample_scene_truth(0)
    first, second = truth.poses[0], truth.poses[3]
    motion = relative_pose(first, second)
    point_in_first = np.array([0.3, -0.2, 2.0, 1.0])
    world = first @ point_in_first
    assert np.allclose(motion @ point_in_first, np.linalg.inv(second) @ world)
    assert np.allclose(motion, np.linalg.inv(second) @ first)
    translation, rotation = pose_distance(first, second)
    assert translation == np.linalg.norm(motion[:3, 3])
    assert 0 < rotation == rotation_deg(motion) < 30


def test_back_projected_depth_projects_onto_its_own_pixels():
    truth = sample_scene_truth(1)
    pose = truth.poses[4]
    depth, _ = ray_cast(truth, pose, DEPTH_SIZE)
    intrinsics = _intrinsics(DEPTH_SIZE)
    pixels = np.array([[10.5, 20.5], [40.5, 30.5], [70.5, 5.5]])
    z = depth[pixels[:, 1].astype(int), pixels[:, 0].astype(int)]
    world = back_project(pixels, z, intrinsics, pose)
    again, depth_again = project(world, intrinsics, pose)
    assert np.allclose(again, pixels) and np.allclose(depth_again, z)


def test_overlap_is_full_for_one_view_and_falls_with_distance():
    truth = sample_scene_truth(0)
    intrinsics = _intrinsics(DEPTH_SIZE)
    views = {k: ray_cast(truth, truth.poses[k], DEPTH_SIZE)[0] for k in (0, 2, 20)}
    same = depth_overlap(views[0], truth.poses[0], views[0], truth.poses[0], intrinsics, 0.01)
    near = depth_overlap(views[0], truth.poses[0], views[2], truth.poses[2], intrinsics, 0.05)
    far = depth_overlap(views[0], truth.poses[0], views[20], truth.poses[20], intrinsics, 0.05)
    assert same > 0.99 and near > 0.6 and far < near
