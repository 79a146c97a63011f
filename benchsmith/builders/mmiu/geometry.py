"""Camera geometry for the ScanNet tasks: relative poses, pose distances, reprojection.

Conventions (ScanNet's): a pose is camera -> world, 4x4; the camera looks along +z with x to
the right and y down; intrinsics are ``(fx, fy, cx, cy)`` in pixels of the image they belong
to. Every pose here is in the scene's *aligned* frame (``axisAlignment`` applied), the frame
the object boxes use, so poses and boxes of one item always agree.
"""

from __future__ import annotations

import math

import numpy as np

Intrinsics = tuple[float, float, float, float]


def relative_pose(pose_from: np.ndarray, pose_to: np.ndarray) -> np.ndarray:
    """The motion from camera ``from`` to camera ``to``: maps points in ``from``'s camera
    coordinates to ``to``'s (``inv(T_to) @ T_from``)."""
    return np.linalg.inv(np.asarray(pose_to, np.float64)) @ np.asarray(pose_from, np.float64)


def rotation_deg(rotation: np.ndarray) -> float:
    cosine = (float(np.trace(np.asarray(rotation)[:3, :3])) - 1.0) / 2.0
    return math.degrees(math.acos(max(-1.0, min(1.0, cosine))))


def pose_distance(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(translation in metres, rotation in degrees) between two camera poses."""
    motion = relative_pose(a, b)
    return float(np.linalg.norm(motion[:3, 3])), rotation_deg(motion)


def scale_intrinsics(intrinsics: Intrinsics, scale_x: float, scale_y: float) -> Intrinsics:
    fx, fy, cx, cy = intrinsics
    return fx * scale_x, fy * scale_y, cx * scale_x, cy * scale_y


def back_project(
    pixels: np.ndarray, depth_m: np.ndarray, intrinsics: Intrinsics, pose: np.ndarray
) -> np.ndarray:
    """World points (n, 3) of pixel centres ``pixels`` (n, 2: x, y) at z-depths ``depth_m``."""
    fx, fy, cx, cy = intrinsics
    x = (pixels[:, 0] - cx) / fx * depth_m
    y = (pixels[:, 1] - cy) / fy * depth_m
    camera = np.stack([x, y, depth_m, np.ones_like(depth_m)], axis=1)
    return (camera @ np.asarray(pose, np.float64).T)[:, :3]


def project(
    points: np.ndarray, intrinsics: Intrinsics, pose: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(pixels (n, 2), z-depths (n,)) of world points seen from camera ``pose``."""
    world_to_camera = np.linalg.inv(np.asarray(pose, np.float64))
    camera = np.c_[points, np.ones(len(points))] @ world_to_camera.T
    z = camera[:, 2]
    with np.errstate(divide="ignore", invalid="ignore"):
        u = intrinsics[0] * camera[:, 0] / z + intrinsics[2]
        v = intrinsics[1] * camera[:, 1] / z + intrinsics[3]
    return np.stack([u, v], axis=1), z


def pixel_centres(width: int, height: int) -> np.ndarray:
    u, v = np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5)
    return np.stack([u.ravel(), v.ravel()], axis=1)


def visible_in(
    points: np.ndarray,
    depth_m: np.ndarray,
    intrinsics: Intrinsics,
    pose: np.ndarray,
    tolerance_m: float,
) -> tuple[np.ndarray, np.ndarray]:
    """Which world points frame ``pose`` sees (inside the image, in front, not hidden: its own
    depth there agrees within ``tolerance_m``), and their pixels in that frame."""
    height, width = depth_m.shape
    pixels, z = project(points, intrinsics, pose)
    inside = (z > 0) & np.isfinite(pixels).all(axis=1)
    inside &= (pixels[:, 0] >= 0) & (pixels[:, 0] < width)
    inside &= (pixels[:, 1] >= 0) & (pixels[:, 1] < height)
    seen = np.zeros(len(points), dtype=bool)
    cols = np.clip(np.floor(pixels[inside, 0]).astype(int), 0, width - 1)
    rows = np.clip(np.floor(pixels[inside, 1]).astype(int), 0, height - 1)
    measured = depth_m[rows, cols]
    seen[inside] = (measured > 0) & (np.abs(measured - z[inside]) <= tolerance_m)
    return seen, pixels


def depth_overlap(
    depth_a: np.ndarray,
    pose_a: np.ndarray,
    depth_b: np.ndarray,
    pose_b: np.ndarray,
    intrinsics: Intrinsics,
    tolerance_m: float,
) -> float:
    """Share of view a's valid depth pixels that view b sees at the depth it measures."""
    height, width = depth_a.shape
    pixels = pixel_centres(width, height)
    depth = depth_a.reshape(-1).astype(np.float64)
    valid = depth > 0
    if not valid.any():
        return 0.0
    points = back_project(pixels[valid], depth[valid], intrinsics, pose_a)
    seen, _ = visible_in(points, depth_b.astype(np.float64), intrinsics, pose_b, tolerance_m)
    return float(seen.mean())
