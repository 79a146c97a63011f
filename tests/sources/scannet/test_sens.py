"""ScanNet ``.sens`` v4: a Python 3 reader that indexes once, seeks per frame, and says what is
wrong with a bad file. Streams are written here in the real layout from known frames."""

from __future__ import annotations

import io
import struct
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from benchsmith.core.errors import SourceError
from benchsmith.sources.scannet.sens import FRAME_FIXED, SensIndex, SensReader
from benchsmith.sources.scannet.sens_writer import SensFrameData, SensStreamInfo, write_sens

COLOR = (32, 24)  # width, height
DEPTH = (16, 12)


def yaw(degrees: float) -> np.ndarray:
    c, s = np.cos(np.radians(degrees)), np.sin(np.radians(degrees))
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def pose(rotation: np.ndarray, translation: tuple[float, float, float]) -> np.ndarray:
    out = np.eye(4, dtype=np.float32)
    out[:3, :3], out[:3, 3] = rotation, translation
    return out


POSES = [
    pose(np.eye(3), (0, 0, 0)),
    pose(np.eye(3), (0.005, 0, 0)),  # +5 mm in x
    pose(yaw(2), (0.01, 0, 0)),  # +1 cm with a 2 degree yaw
    pose(yaw(90), (3.0, 2.0, 1.5)),  # a far view
    np.full((4, 4), -np.inf, dtype=np.float32),  # a tracking failure
    pose(np.eye(3), (0.02, 0, 0)),  # repeats the previous timestamp
]


def patches(k: int) -> np.ndarray:
    """A colour frame of four coloured quadrants, shifted per frame (checkable correspondences)."""
    image = np.zeros((COLOR[1], COLOR[0], 3), dtype=np.uint8)
    image[:12, :16] = (200, 30, 30)
    image[:12, 16:] = (30, 200, 30)
    image[12:, :16] = (30, 30, 200)
    image[12:, 16:] = (220, 220, 40 + 30 * k)
    return image


def depth_of(k: int) -> np.ndarray:
    rng = np.random.default_rng(k)
    return rng.integers(400, 6000, size=(DEPTH[1], DEPTH[0]), dtype=np.uint16)


def frames() -> list[SensFrameData]:
    stamps = [0, 33_333, 66_666, 99_999, 133_332, 133_332]
    out = []
    for k, camera in enumerate(POSES):
        buffer = io.BytesIO()
        Image.fromarray(patches(k)).save(buffer, "JPEG", quality=95)
        out.append(SensFrameData(camera, buffer.getvalue(), depth_of(k), stamps[k], stamps[k] + 7))
    return out


INTRINSIC = np.array(
    [[28.0, 0, 16, 0], [0, 28.0, 12, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=np.float32
)


@pytest.fixture()
def stream(tmp_path) -> Path:
    info = SensStreamInfo(COLOR, DEPTH, intrinsic_color=INTRINSIC, intrinsic_depth=INTRINSIC / 2)
    return write_sens(tmp_path / "scene0000_00.sens", info, frames())


def test_round_trip_is_exact(stream):
    written = frames()
    with SensReader(stream) as sens:
        header = sens.header
        assert (header.version, header.sensor_name) == (4, "StructureSensor")
        assert (header.color_compression, header.depth_compression) == ("jpeg", "zlib_ushort")
        assert (header.color_size, header.depth_size) == (COLOR, DEPTH)
        assert header.depth_shift == 1000.0 and header.n_frames == len(POSES)
        assert np.array_equal(header.intrinsic_color, INTRINSIC)
        assert np.array_equal(header.intrinsic_depth, INTRINSIC / 2)
        for k, frame in enumerate(written):
            assert np.array_equal(sens.pose(k), frame.camera_to_world.astype(np.float32))
            assert sens.color_bytes(k) == frame.color  # bit-exact payload
            assert np.array_equal(sens.depth(k), frame.depth)
            decoded, drawn = sens.color(k).astype(int), patches(k).astype(int)
            for rows, cols in ((slice(2, 9), slice(2, 13)), (slice(15, 22), slice(19, 30))):
                assert np.abs(decoded[rows, cols] - drawn[rows, cols]).max() <= 8  # JPEG
            assert sens.frames[k].timestamp_color == frame.timestamp_color
            assert sens.frames[k].timestamp_depth == frame.timestamp_depth
        assert np.allclose(sens.depth_metres(0), written[0].depth / 1000.0)


def test_relative_pose_of_nearby_frames(stream):
    """The pose from frame 0 to frame 2 is inv(T2) @ T0: 1 cm and 2 degrees, as written."""
    with SensReader(stream) as sens:
        t0, t2 = sens.pose(0).astype(np.float64), sens.pose(2).astype(np.float64)
    relative = np.linalg.inv(t2) @ t0
    expected = np.linalg.inv(POSES[2].astype(np.float64)) @ POSES[0].astype(np.float64)
    assert np.allclose(relative, expected, atol=1e-6)
    angle = np.degrees(np.arccos((np.trace(relative[:3, :3]) - 1) / 2))
    assert abs(angle - 2.0) < 1e-4
    assert abs(np.linalg.norm(relative[:3, 3]) - 0.01) < 1e-6


def test_non_finite_poses_are_indexed_but_skipped_and_counted(stream):
    with SensReader(stream) as sens:
        assert len(sens.frames) == 6
        assert sens.valid_frames == [0, 1, 2, 3, 5]
        assert sens.skipped_nonfinite == 1
        assert not np.isfinite(sens.pose(4)).any()


class CountingFile(io.FileIO):
    """A file that counts the bytes read through it."""

    read_bytes = 0

    def read(self, size=-1):
        data = super().read(size)
        self.read_bytes += len(data)
        return data


def test_opening_reads_only_the_header_and_each_frames_fixed_part(stream):
    """Payloads are skipped with seeks when indexing, and one frame is one seek and one read."""
    handle = CountingFile(stream, "rb")
    with SensReader(stream, handle=handle) as sens:
        payloads = sum(f.color_bytes + f.depth_bytes for f in sens.frames)
        assert handle.read_bytes <= stream.stat().st_size - payloads
        assert handle.read_bytes == 4 + 8 + 15 + 4 * 64 + 36 + 6 * FRAME_FIXED.size
        before = handle.read_bytes
        last = sens.frames[-1]
        sens.depth(5)  # random access to the last frame
        assert handle.read_bytes - before == last.depth_bytes


def test_a_wrong_version_names_the_file(stream, tmp_path):
    data = bytearray(stream.read_bytes())
    data[:4] = struct.pack("<I", 3)
    old = tmp_path / "old.sens"
    old.write_bytes(bytes(data))
    with pytest.raises(SourceError, match="unsupported .sens version 3") as error:
        SensReader(old)
    assert "old.sens" in str(error.value)


def test_a_truncated_file_names_the_file_and_frame(stream, tmp_path):
    data = stream.read_bytes()
    with SensReader(stream) as sens:
        cut_in_frame = sens.frames[3].depth_offset + 5
        cut_in_fixed = sens.frames[2].color_offset - 10
    for cut, frame in ((cut_in_frame, 3), (cut_in_fixed, 2)):
        short = tmp_path / f"short{frame}.sens"
        short.write_bytes(data[:cut])
        with pytest.raises(SourceError, match=rf"truncated .sens file: frame {frame}\b") as error:
            SensReader(short)
        assert f"short{frame}.sens" in str(error.value)
    header_only = tmp_path / "header.sens"
    header_only.write_bytes(data[:60])
    with pytest.raises(SourceError, match="truncated .sens file: the header matrices"):
        SensReader(header_only)


def test_corrupt_depth_is_an_error_naming_the_frame(stream, tmp_path):
    data = bytearray(stream.read_bytes())
    with SensReader(stream) as sens:
        frame = sens.frames[1]
    data[frame.depth_offset : frame.depth_offset + 8] = b"\x00" * 8
    bad = tmp_path / "bad.sens"
    bad.write_bytes(bytes(data))
    with SensReader(bad) as sens, pytest.raises(SourceError, match="frame 1: depth"):
        sens.depth(1)


def test_a_reader_opened_with_an_index_reads_nothing_to_open_and_the_same_frames(stream):
    with SensReader(stream) as sens:
        index = sens.index()
        expected = [(f, sens.color_bytes(f.index), sens.depth(f.index).tobytes())
                    for f in sens.frames]  # fmt: skip
        header = sens.header
    handle = CountingFile(stream, "rb")
    with SensReader(stream, handle=handle, index=index) as again:
        assert handle.read_bytes == 0  # no header, no frame record: the index says it all
        assert again.header is header
        assert again.valid_frames == [0, 1, 2, 3, 5] and again.skipped_nonfinite == 1
        for frame, color, depth in expected:
            ours = again.frame(frame.index)
            assert (ours.color_offset, ours.color_bytes, ours.depth_offset, ours.depth_bytes) == (
                frame.color_offset, frame.color_bytes, frame.depth_offset, frame.depth_bytes)  # fmt: skip
            np.testing.assert_array_equal(ours.camera_to_world, frame.camera_to_world)
            assert again.color_bytes(frame.index) == color
            assert again.depth(frame.index).tobytes() == depth
        assert again.index().records.tolist() == index.records.tolist()


def test_an_index_of_another_size_is_refused_naming_the_file(stream):
    with SensReader(stream) as sens:
        index = sens.index()
    with stream.open("ab") as handle:
        handle.write(b"\0" * 10)
    with pytest.raises(SourceError, match="changed since it was indexed") as raised:
        SensReader(stream, index=index)
    assert raised.value.path == str(stream)


def test_an_index_round_trips_through_plain_arrays(stream, tmp_path):
    with SensReader(stream) as sens:
        index = sens.index()
        first = sens.depth(0).tobytes()
    np.savez(tmp_path / "index.npz", **index.to_arrays())
    with np.load(tmp_path / "index.npz", allow_pickle=False) as saved:  # nothing unpickled
        again = SensIndex.from_arrays({name: saved[name] for name in saved.files})
    assert again.header.color_size == COLOR and again.header.depth_size == DEPTH
    np.testing.assert_array_equal(again.header.intrinsic_depth, INTRINSIC / 2)
    assert again.records.tolist() == index.records.tolist() and again.file_size == index.file_size
    with SensReader(stream, index=again) as reopened:
        assert reopened.depth(0).tobytes() == first
    broken = {**index.to_arrays(), "records": index.records[:-1]}
    with pytest.raises(ValueError, match="frame count"):
        SensIndex.from_arrays(broken)
