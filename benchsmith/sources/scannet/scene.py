"""Read one ScanNet v2 scene's annotation files: scene info, mesh, segments, objects, labels.

Per scene (``scans/sceneXXXX_YY/``) ScanNet ships, besides the ``.sens`` stream:

- ``sceneXXXX_YY.txt``: ``key = value`` lines; ``axisAlignment`` (16 floats, row-major) maps
  the raw mesh and camera frame to a gravity- and wall-aligned one, ``fx_color``/``mx_color``...
  are the colour intrinsics;
- ``sceneXXXX_YY_vh_clean_2.ply``: the cleaned, decimated mesh (binary PLY, read with plyfile);
- ``sceneXXXX_YY_vh_clean_2.0.010000.segs.json``: ``segIndices``, one segment id per vertex;
- ``sceneXXXX_YY.aggregation.json``: ``segGroups`` ``{id, objectId, segments, label}``, the
  objects as groups of segments (the ``_vh_clean.aggregation.json`` variant belongs to the
  high-resolution mesh and is not read);
- ``scannetv2-labels.combined.tsv`` (one per release): raw label -> category, NYU40 class.

:func:`object_boxes` turns these into axis-aligned boxes in the aligned frame (the frame the
poses are put in with :func:`aligned_pose`), so a box and a camera always share one frame.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchsmith.core.errors import SourceError

MESH_SUFFIX = "_vh_clean_2.ply"
SEGS_SUFFIX = "_vh_clean_2.0.010000.segs.json"
AGGREGATION_SUFFIX = ".aggregation.json"
LABELS_FILE = "scannetv2-labels.combined.tsv"
FIX = "use the scene folder as ScanNet's download script writes it (scans/sceneXXXX_YY/)"


@dataclass(frozen=True)
class SceneInfo:
    scene_id: str
    axis_alignment: np.ndarray  # 4x4, raw -> aligned
    color_intrinsics: tuple[float, float, float, float]  # fx, fy, cx, cy
    color_size: tuple[int, int]  # width, height
    scene_type: str


@dataclass(frozen=True)
class ObjectBox:
    """One annotated object as an axis-aligned box in the aligned frame (metres)."""

    object_id: int
    label: str  # the raw annotation label
    category: str  # the tsv's category ("" when the label is not in the tsv)
    nyu40class: str
    center: tuple[float, float, float]
    size: tuple[float, float, float]


def scene_file(scene_dir: Path, suffix: str) -> Path:
    return Path(scene_dir) / f"{Path(scene_dir).name}{suffix}"


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise SourceError("scene file missing", path=path, fix=FIX)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SourceError(f"not valid JSON ({exc})", path=path, fix=FIX) from exc


def read_scene_info(scene_dir: str | Path) -> SceneInfo:
    """``sceneXXXX_YY.txt``: axis alignment (identity when the scene has none), intrinsics."""
    path = scene_file(Path(scene_dir), ".txt")
    if not path.is_file():
        raise SourceError("scene info file missing", path=path, fix=FIX)
    values: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            values[key.strip()] = value.strip()
    try:
        numbers = [float(v) for v in values.get("axisAlignment", "").split()]
        alignment = np.array(numbers, dtype=np.float64).reshape(4, 4) if numbers else np.eye(4)
        intrinsics = tuple(
            float(values[k]) for k in ("fx_color", "fy_color", "mx_color", "my_color")
        )
        size = (int(values["colorWidth"]), int(values["colorHeight"]))
    except (KeyError, ValueError) as exc:
        raise SourceError(
            f"scene info lacks or garbles {exc} (axisAlignment must be 16 numbers)",
            path=path,
            fix=FIX,
        ) from exc
    return SceneInfo(Path(scene_dir).name, alignment, intrinsics, size, values.get("sceneType", ""))


def read_mesh_vertices(scene_dir: str | Path) -> np.ndarray:
    """The mesh's vertex positions, (n, 3) float64, in the raw frame."""
    from plyfile import PlyData, PlyParseError

    path = scene_file(Path(scene_dir), MESH_SUFFIX)
    if not path.is_file():
        raise SourceError("mesh file missing", path=path, fix=FIX)
    try:
        vertex = PlyData.read(str(path))["vertex"]
        return np.stack([vertex["x"], vertex["y"], vertex["z"]], axis=1).astype(np.float64)
    except (PlyParseError, KeyError, ValueError, EOFError) as exc:
        raise SourceError(f"PLY mesh does not parse ({exc})", path=path, fix=FIX) from exc


def read_segments(scene_dir: str | Path, n_vertices: int) -> np.ndarray:
    """``segIndices``: the segment of every mesh vertex (as many as the mesh has vertices)."""
    path = scene_file(Path(scene_dir), SEGS_SUFFIX)
    seg = _read_json(path).get("segIndices")
    if not isinstance(seg, list) or len(seg) != n_vertices:
        raise SourceError(
            f"segIndices has {len(seg) if isinstance(seg, list) else 'no'} entries, the mesh "
            f"{n_vertices} vertices",
            path=path,
            fix=FIX,
        )
    return np.asarray(seg, dtype=np.int64)


def read_aggregation(scene_dir: str | Path) -> list[dict[str, Any]]:
    """``segGroups`` of ``sceneXXXX_YY.aggregation.json`` (the decimated mesh's grouping)."""
    path = scene_file(Path(scene_dir), AGGREGATION_SUFFIX)
    groups = _read_json(path).get("segGroups")
    if not isinstance(groups, list) or not all(
        isinstance(g, dict) and {"objectId", "segments", "label"} <= set(g) for g in groups
    ):
        raise SourceError(
            "segGroups must be a list of {objectId, segments, label}", path=path, fix=FIX
        )
    return groups


def read_label_map(path: str | Path) -> dict[str, tuple[str, str]]:
    """``scannetv2-labels.combined.tsv``: raw label -> (category, NYU40 class)."""
    path = Path(path)
    if not path.is_file():
        raise SourceError("label map missing", path=path, fix=f"put {LABELS_FILE} at the root")
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    if not rows or not {"raw_category", "category", "nyu40class"} <= set(rows[0]):
        raise SourceError(
            "label map lacks raw_category, category or nyu40class columns, or any row under them",
            path=path,
            fix=FIX,
        )
    return {r["raw_category"]: (r["category"], r["nyu40class"]) for r in rows}


def aligned_pose(camera_to_world: np.ndarray, info: SceneInfo) -> np.ndarray:
    """A ``.sens`` pose (camera -> raw world) in the aligned frame the boxes use."""
    return info.axis_alignment @ np.asarray(camera_to_world, dtype=np.float64)


def object_boxes(
    scene_dir: str | Path, labels: dict[str, tuple[str, str]]
) -> tuple[list[ObjectBox], list[str]]:
    """Every annotated object's box in the aligned frame, and the labels missing from the tsv.

    A label the tsv lacks keeps its object (category "" and counted in the second value): the
    caller decides whether such objects may be asked about.
    """
    scene_dir = Path(scene_dir)
    info = read_scene_info(scene_dir)
    vertices = read_mesh_vertices(scene_dir)
    segments = read_segments(scene_dir, len(vertices))
    homogeneous = np.c_[vertices, np.ones(len(vertices))]
    aligned = (homogeneous @ info.axis_alignment.T)[:, :3]
    boxes, unknown = [], []
    for group in read_aggregation(scene_dir):
        points = aligned[np.isin(segments, np.asarray(group["segments"], dtype=np.int64))]
        if len(points) == 0:
            continue
        low, high = points.min(axis=0), points.max(axis=0)
        category, nyu40 = labels.get(group["label"], ("", ""))
        if not category:
            unknown.append(group["label"])
        boxes.append(
            ObjectBox(
                object_id=int(group["objectId"]),
                label=str(group["label"]),
                category=category,
                nyu40class=nyu40,
                center=tuple(float(v) for v in (low + high) / 2),
                size=tuple(float(v) for v in high - low),
            )
        )
    return boxes, unknown


def read_split(path: str | Path) -> list[str]:
    """A ``scannetv2_{train,val,test}.txt`` list of scene ids."""
    path = Path(path)
    if not path.is_file():
        raise SourceError("split list missing", path=path, fix=FIX)
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
