"""Write ``.sens`` version 4 streams: the sample scenes, and test files in the real format.

The inverse of :mod:`.sens`: the same header and per-frame layout, colour as JPEG bytes (given,
or encoded here from an array) and depth as zlib-compressed little-endian ``uint16``. Written to
a temporary sibling and renamed, so a reader never sees half a stream.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from benchsmith.core.atomic import atomic_path
from benchsmith.sources.scannet.sens import MATRIX, SENS_VERSION

JPEG = 2
ZLIB_USHORT = 1


@dataclass(frozen=True)
class SensFrameData:
    camera_to_world: np.ndarray  # 4x4
    color: bytes | np.ndarray  # JPEG bytes, or (h, w, 3) uint8 to encode
    depth: np.ndarray  # (h, w) uint16, sensor units
    timestamp_color: int = 0
    timestamp_depth: int = 0


@dataclass(frozen=True)
class SensStreamInfo:
    color_size: tuple[int, int]  # (width, height)
    depth_size: tuple[int, int]
    intrinsic_color: np.ndarray = field(default_factory=lambda: np.eye(4, dtype=np.float32))
    intrinsic_depth: np.ndarray = field(default_factory=lambda: np.eye(4, dtype=np.float32))
    extrinsic_color: np.ndarray = field(default_factory=lambda: np.eye(4, dtype=np.float32))
    extrinsic_depth: np.ndarray = field(default_factory=lambda: np.eye(4, dtype=np.float32))
    depth_shift: float = 1000.0
    sensor_name: str = "StructureSensor"
    jpeg_quality: int = 90


def _matrix(values: np.ndarray) -> bytes:
    return MATRIX.pack(*np.asarray(values, dtype=np.float32).reshape(16).tolist())


def color_jpeg(color: bytes | np.ndarray, quality: int) -> bytes:
    if isinstance(color, bytes):
        return color
    buffer = io.BytesIO()
    Image.fromarray(np.asarray(color, dtype=np.uint8), "RGB").save(buffer, "JPEG", quality=quality)
    return buffer.getvalue()


def sens_bytes(info: SensStreamInfo, frames: list[SensFrameData]) -> Iterable[bytes]:
    """The stream, piece by piece (header, then each frame)."""
    name = info.sensor_name.encode("utf-8")
    yield struct.pack("<IQ", SENS_VERSION, len(name)) + name
    for matrix in (
        info.intrinsic_color,
        info.extrinsic_color,
        info.intrinsic_depth,
        info.extrinsic_depth,
    ):
        yield _matrix(matrix)
    yield struct.pack("<ii4IfQ", JPEG, ZLIB_USHORT, *info.color_size, *info.depth_size,
                      info.depth_shift, len(frames))  # fmt: skip
    for frame in frames:
        color = color_jpeg(frame.color, info.jpeg_quality)
        depth = np.asarray(frame.depth, dtype="<u2")
        if depth.shape != (info.depth_size[1], info.depth_size[0]):
            raise ValueError(f"depth is {depth.shape}, the stream says {info.depth_size} (w, h)")
        packed = zlib.compress(depth.tobytes(), 6)
        yield _matrix(frame.camera_to_world)
        yield struct.pack("<4Q", frame.timestamp_color, frame.timestamp_depth, len(color),
                          len(packed))  # fmt: skip
        yield color
        yield packed


def write_sens(path: str | Path, info: SensStreamInfo, frames: list[SensFrameData]) -> Path:
    """Write ``path`` atomically; returns it."""
    path = Path(path)
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        for piece in sens_bytes(info, frames):
            handle.write(piece)
    return path


def upscale_depth(path: str | Path, factor: int) -> int:
    """Rewrite the stream at ``path`` with its depth ``factor`` times larger each way (nearest
    neighbour, depth intrinsics scaled to the finer pixel grid): the sample scenes at the
    640x480 depth of real ScanNet, for benchmarks and for tests that need slow scenes.
    Returns the frames written."""
    from benchsmith.sources.scannet.sens import SensReader

    with SensReader(path) as reader:
        header = reader.header
        intrinsic = np.array(header.intrinsic_depth, dtype=np.float64)
        intrinsic[:2, :3] *= factor
        intrinsic[:2, 2] += (factor - 1) / 2  # pixel centres of the finer grid
        width, height = header.depth_size
        info = SensStreamInfo(header.color_size, (width * factor, height * factor),
                              header.intrinsic_color, intrinsic, header.extrinsic_color,
                              header.extrinsic_depth, header.depth_shift)  # fmt: skip
        frames = [SensFrameData(reader.pose(k), reader.color_bytes(k),
                                reader.depth(k).repeat(factor, 0).repeat(factor, 1))
                  for k in range(len(reader.frames))]  # fmt: skip
    write_sens(path, info, frames)
    return len(frames)
