"""Read ScanNet's ``.sens`` RGB-D streams (version 4) in Python 3, one frame at a time.

ScanNet's own reader is Python 2 and loads every frame into memory; a scene's stream is GBs. This
reader parses the header, then walks the frame records once, reading only each record's fixed
part (pose, timestamps, byte counts) and seeking over the colour and depth payloads, so opening a
stream costs one pass of seeks and any frame is then read with one seek. Layout (all little
endian), as ScanNet's SensorData writes it:

- header: ``u32 version`` (4); ``u64 n`` + ``n`` bytes of sensor name; four 4x4 ``f32`` matrices
  (colour intrinsics, colour extrinsics, depth intrinsics, depth extrinsics); ``i32`` colour
  compression (2 = JPEG); ``i32`` depth compression (1 = zlib of ``u16``); ``u32`` colour width,
  height; ``u32`` depth width, height; ``f32`` depth shift (depth units per metre, usually 1000);
  ``u64`` frame count;
- per frame: a 4x4 ``f32`` camera-to-world pose; ``u64`` colour and depth timestamps; ``u64``
  colour and depth byte counts; the colour bytes; the depth bytes.

Some ScanNet frames carry non-finite poses (``-inf`` everywhere, a tracking failure): they are
indexed but not :attr:`SensReader.valid_frames`, and counted in
:attr:`SensReader.skipped_nonfinite`. A wrong version, an unknown compression or a file that ends
inside a record is a :class:`~benchsmith.core.errors.SourceError` naming the file and the frame.
"""

from __future__ import annotations

import io
import json
import struct
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import BinaryIO

import numpy as np

from benchsmith.core.errors import SourceError

SENS_VERSION = 4
COLOR_COMPRESSION = {-1: "unknown", 0: "raw", 1: "png", 2: "jpeg"}
DEPTH_COMPRESSION = {-1: "unknown", 0: "raw_ushort", 1: "zlib_ushort", 2: "occi_ushort"}
FRAME_FIXED = struct.Struct("<16f4Q")  # pose, colour/depth timestamps, colour/depth sizes
MATRIX = struct.Struct("<16f")
HEADER_MATRICES = ("intrinsic_color", "extrinsic_color", "intrinsic_depth", "extrinsic_depth")
FIX = "use an intact copy of the scene (re-download it: the ScanNet script checks nothing)"


@dataclass(frozen=True)
class SensHeader:
    version: int
    sensor_name: str
    intrinsic_color: np.ndarray
    extrinsic_color: np.ndarray
    intrinsic_depth: np.ndarray
    extrinsic_depth: np.ndarray
    color_compression: str
    depth_compression: str
    color_size: tuple[int, int]  # (width, height)
    depth_size: tuple[int, int]
    depth_shift: float
    n_frames: int


@dataclass(frozen=True)
class SensFrame:
    """Where one frame's payloads are, and its fixed fields."""

    index: int
    camera_to_world: np.ndarray  # 4x4 float32
    timestamp_color: int
    timestamp_depth: int
    color_offset: int
    color_bytes: int
    depth_offset: int
    depth_bytes: int

    @property
    def finite(self) -> bool:
        return bool(np.isfinite(self.camera_to_world).all())


@dataclass(frozen=True)
class SensIndex:
    """What opening a stream reads (its header and every frame record), in 96 bytes a frame.

    Why: indexing walks the whole file (a record before each payload), which on a network
    filesystem reads most of its bytes. A cluster run indexes each stream once, in the task that
    extracts its frames, and hands the index back, so the driver opens the streams it renders
    from without a pass of its own (:class:`SensReader` ``index=``)."""

    header: SensHeader
    poses: np.ndarray  # (n, 4, 4) float32 camera-to-world, as recorded
    records: np.ndarray  # (n, 6) int64: colour, depth timestamps; colour offset, bytes; depth ..
    file_size: int  # the stream's size when indexed: a reader refuses a stream that changed

    def frames(self) -> list[SensFrame]:
        return [
            SensFrame(k, self.poses[k], int(r[0]), int(r[1]), int(r[2]), int(r[3]), int(r[4]),
                      int(r[5]))
            for k, r in enumerate(self.records.tolist())
        ]  # fmt: skip

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Plain arrays (``np.savez``-able, read back without unpickling anything)."""
        header = self.header
        scalars = {f.name: getattr(header, f.name) for f in fields(header)
                   if f.name not in HEADER_MATRICES}  # fmt: skip
        return {
            "header": np.array(json.dumps(scalars, sort_keys=True)),
            **{name: getattr(header, name) for name in HEADER_MATRICES},
            "poses": self.poses,
            "records": self.records,
            "file_size": np.array(self.file_size, dtype=np.int64),
        }

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> SensIndex:
        """The index :meth:`to_arrays` wrote; ValueError (or KeyError) when it is not one."""
        scalars = json.loads(str(arrays["header"]))
        scalars["color_size"] = tuple(scalars["color_size"])
        scalars["depth_size"] = tuple(scalars["depth_size"])
        header = SensHeader(**scalars, **{name: arrays[name] for name in HEADER_MATRICES})
        index = cls(header, arrays["poses"], arrays["records"], int(arrays["file_size"]))
        if index.poses.shape != (header.n_frames, 4, 4) or index.records.shape != (
            header.n_frames, 6):  # fmt: skip
            raise ValueError("index arrays do not match the header's frame count")
        return index


class SensReader:
    """An indexed ``.sens`` stream: ``header``, ``frames`` (all), ``valid_frames`` (finite pose);
    ``color(i)``, ``depth(i)``, ``pose(i)`` read one frame. Use as a context manager. Given the
    ``index`` of an earlier reader (:meth:`index`), it opens without walking the file."""

    def __init__(
        self, path: str | Path, handle: BinaryIO | None = None, index: SensIndex | None = None
    ):
        self.path = Path(path)
        try:
            self._handle = handle or open(self.path, "rb")  # noqa: SIM115 - closed in close()
        except OSError as exc:
            raise SourceError(f".sens file cannot be opened ({exc.strerror})", path=path) from exc
        self._size = self._handle.seek(0, io.SEEK_END)
        self._handle.seek(0)
        try:
            if index is not None and index.file_size != self._size:
                raise SourceError(
                    f".sens file changed since it was indexed ({index.file_size} bytes then, "
                    f"{self._size} now)",
                    path=self.path,
                    fix="rerun the step: the stream is indexed again",
                )
            self.header = index.header if index is not None else self._read_header()
            self.frames = index.frames() if index is not None else list(self._index_frames())
        except BaseException:
            self.close()
            raise
        self.valid_frames = [f.index for f in self.frames if f.finite]
        self.skipped_nonfinite = len(self.frames) - len(self.valid_frames)

    # -- parsing -------------------------------------------------------------------------------

    def _read(self, count: int, what: str) -> bytes:
        data = self._handle.read(count)
        if len(data) != count:
            raise SourceError(
                f"truncated .sens file: {what} needs {count} bytes at offset "
                f"{self._handle.tell() - len(data)}, the file has {self._size}",
                path=self.path,
                fix=FIX,
            )
        return data

    def _unpack(self, fmt: str, what: str) -> tuple:
        return struct.unpack(fmt, self._read(struct.calcsize(fmt), what))

    def _matrix(self, what: str) -> np.ndarray:
        return np.array(MATRIX.unpack(self._read(MATRIX.size, what)), dtype=np.float32).reshape(
            4, 4
        )

    def _read_header(self) -> SensHeader:
        (version,) = self._unpack("<I", "the header")
        if version != SENS_VERSION:
            raise SourceError(
                f"unsupported .sens version {version} (this reader reads version {SENS_VERSION}, "
                "the ScanNet v2 release)",
                path=self.path,
                fix="use the ScanNet v2 .sens files",
            )
        (name_length,) = self._unpack("<Q", "the header")
        if name_length > 4096:
            raise SourceError(
                f"not a .sens header (sensor name of {name_length} bytes)", path=self.path, fix=FIX
            )
        name = self._read(name_length, "the sensor name").decode("utf-8", errors="replace")
        matrices = [self._matrix("the header matrices") for _ in range(4)]
        color_c, depth_c = self._unpack("<ii", "the header")
        color_w, color_h, depth_w, depth_h = self._unpack("<4I", "the header")
        (depth_shift,) = self._unpack("<f", "the header")
        (n_frames,) = self._unpack("<Q", "the header")
        if COLOR_COMPRESSION.get(color_c) not in ("jpeg", "png", "raw"):
            raise SourceError(
                f"colour compression {COLOR_COMPRESSION.get(color_c, color_c)!r} is not supported",
                path=self.path,
                fix="ScanNet v2 streams store JPEG colour",
            )
        if DEPTH_COMPRESSION.get(depth_c) not in ("zlib_ushort", "raw_ushort"):
            raise SourceError(
                f"depth compression {DEPTH_COMPRESSION.get(depth_c, depth_c)!r} is not supported",
                path=self.path,
                fix="ScanNet v2 streams store zlib-compressed uint16 depth",
            )
        return SensHeader(
            version=version,
            sensor_name=name,
            intrinsic_color=matrices[0],
            extrinsic_color=matrices[1],
            intrinsic_depth=matrices[2],
            extrinsic_depth=matrices[3],
            color_compression=COLOR_COMPRESSION[color_c],
            depth_compression=DEPTH_COMPRESSION[depth_c],
            color_size=(color_w, color_h),
            depth_size=(depth_w, depth_h),
            depth_shift=float(depth_shift),
            n_frames=int(n_frames),
        )

    def _index_frames(self) -> Iterator[SensFrame]:
        for index in range(self.header.n_frames):
            fixed = FRAME_FIXED.unpack(self._read(FRAME_FIXED.size, f"frame {index}"))
            pose = np.array(fixed[:16], dtype=np.float32).reshape(4, 4)
            ts_color, ts_depth, color_bytes, depth_bytes = fixed[16:]
            color_offset = self._handle.tell()
            end = color_offset + color_bytes + depth_bytes
            if end > self._size:
                raise SourceError(
                    f"truncated .sens file: frame {index} of {self.header.n_frames} ends at "
                    f"byte {end}, the file has {self._size}",
                    path=self.path,
                    fix=FIX,
                )
            self._handle.seek(end)
            yield SensFrame(
                index=index,
                camera_to_world=pose,
                timestamp_color=int(ts_color),
                timestamp_depth=int(ts_depth),
                color_offset=color_offset,
                color_bytes=int(color_bytes),
                depth_offset=color_offset + color_bytes,
                depth_bytes=int(depth_bytes),
            )

    def index(self) -> SensIndex:
        """This stream's index, to open it elsewhere without walking it again."""
        poses = (
            np.stack([f.camera_to_world for f in self.frames])
            if self.frames
            else np.zeros((0, 4, 4), dtype=np.float32)
        )
        records = np.array(
            [[f.timestamp_color, f.timestamp_depth, f.color_offset, f.color_bytes,
              f.depth_offset, f.depth_bytes] for f in self.frames],
            dtype=np.int64,
        ).reshape(-1, 6)  # fmt: skip
        return SensIndex(self.header, poses.astype(np.float32), records, self._size)

    # -- frames --------------------------------------------------------------------------------

    def _payload(self, offset: int, count: int) -> bytes:
        self._handle.seek(offset)
        return self._handle.read(count)

    def frame(self, index: int) -> SensFrame:
        if not 0 <= index < len(self.frames):
            raise IndexError(f"{self.path.name} has frames 0..{len(self.frames) - 1}, not {index}")
        return self.frames[index]

    def pose(self, index: int) -> np.ndarray:
        """Camera-to-world 4x4 (float32), as recorded (may be non-finite)."""
        return self.frame(index).camera_to_world.copy()

    def color_bytes(self, index: int) -> bytes:
        """The colour payload as stored (a JPEG for ScanNet v2)."""
        frame = self.frame(index)
        return self._payload(frame.color_offset, frame.color_bytes)

    def depth_bytes(self, index: int) -> bytes:
        """The depth payload as stored (zlib-compressed ``uint16`` for ScanNet v2)."""
        frame = self.frame(index)
        return self._payload(frame.depth_offset, frame.depth_bytes)

    def color(self, index: int) -> np.ndarray:
        """Colour as (height, width, 3) uint8."""
        data = self.color_bytes(index)
        width, height = self.header.color_size
        if self.header.color_compression == "raw":
            return np.frombuffer(data, dtype=np.uint8).reshape(height, width, 3).copy()
        from benchsmith.images.decode import decode_rgb

        return np.asarray(decode_rgb(data, f"{self.path}:frame {index}"))

    def depth(self, index: int) -> np.ndarray:
        """Depth as (height, width) uint16 in sensor units (divide by ``depth_shift`` for m)."""
        data = self.depth_bytes(index)
        if self.header.depth_compression == "zlib_ushort":
            try:
                data = zlib.decompress(data)
            except zlib.error as exc:
                raise SourceError(
                    f"frame {index}: depth does not decompress ({exc})", path=self.path, fix=FIX
                ) from exc
        width, height = self.header.depth_size
        if len(data) != width * height * 2:
            raise SourceError(
                f"frame {index}: depth has {len(data)} bytes, expected {width}x{height} uint16",
                path=self.path,
                fix=FIX,
            )
        return np.frombuffer(data, dtype="<u2").reshape(height, width).copy()

    def depth_metres(self, index: int) -> np.ndarray:
        return self.depth(index).astype(np.float32) / np.float32(self.header.depth_shift)

    # -- lifetime ------------------------------------------------------------------------------

    def close(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None and not handle.closed:
            handle.close()

    def __enter__(self) -> SensReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
