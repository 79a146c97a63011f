"""safe_extract_zip: hostile member names, symlinks and corrupt archives never reach the disk."""

from __future__ import annotations

import os
import stat
import struct
import zipfile
from pathlib import Path

import pytest
from archive_bombs import write_zip_bomb

from benchsmith.core.errors import SourceError
from benchsmith.core.limits import ArchiveLimits, archive_limits, set_archive_limits
from benchsmith.sources.fetching.archive import check_zip, safe_extract_zip


def make_zip(
    path: Path, members: dict[str, bytes], *, compression: int = zipfile.ZIP_DEFLATED
) -> Path:
    with zipfile.ZipFile(path, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(zipfile.ZipInfo(name), data)
    return path


def files_under(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_extracts_files_and_skips_dirs_and_macosx_junk(tmp_path: Path) -> None:
    zip_path = make_zip(
        tmp_path / "a.zip",
        {
            "top/": b"",
            "top/one.txt": b"1",
            "top/sub/two.txt": b"2",
            "__MACOSX/top/._one.txt": b"junk",
        },
    )
    dest = tmp_path / "out"
    extracted = safe_extract_zip(zip_path, dest)
    assert extracted == [dest / "top" / "one.txt", dest / "top" / "sub" / "two.txt"]
    assert files_under(dest) == ["top/one.txt", "top/sub/two.txt"]
    assert (dest / "top" / "sub" / "two.txt").read_bytes() == b"2"


def test_members_filter_selects_by_posix_name(tmp_path: Path) -> None:
    zip_path = make_zip(tmp_path / "a.zip", {"keep/x.txt": b"x", "drop/y.txt": b"y"})
    dest = tmp_path / "out"
    dest.mkdir()
    (dest / "unrelated.txt").write_text("kept")
    safe_extract_zip(zip_path, dest, members=lambda name: name.startswith("keep/"))
    assert files_under(dest) == ["keep/x.txt", "unrelated.txt"]


@pytest.mark.parametrize(
    "name",
    ["../evil.txt", "ok/../../evil.txt", "..\\evil.txt", "C:/evil.txt", "/tmp/x", "ABSOLUTE"],
)
def test_hostile_member_names_are_refused(tmp_path: Path, name: str) -> None:
    if name == "ABSOLUTE":
        name = str(tmp_path / "absolute-evil.txt")
    dest = tmp_path / "a" / "out"
    zip_path = make_zip(tmp_path / "bad.zip", {"fine.txt": b"ok", name: b"pwned"})
    with pytest.raises(SourceError, match="refusing to extract bad.zip") as info:
        safe_extract_zip(zip_path, dest)
    assert repr(name) in str(info.value)
    assert files_under(tmp_path) == ["bad.zip"]  # nothing written, inside dest or out of it


def test_symlink_member_is_refused(tmp_path: Path) -> None:
    zip_path = tmp_path / "link.zip"
    with zipfile.ZipFile(zip_path, "w") as archive:
        info = zipfile.ZipInfo("val2014/escape")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(info, str(tmp_path))
        archive.writestr("val2014/escape/evil.txt", b"pwned")
    dest = tmp_path / "out"
    with pytest.raises(SourceError, match="'val2014/escape' is a symbolic link"):
        safe_extract_zip(zip_path, dest)
    assert files_under(tmp_path) == ["link.zip"]


def test_truncated_zip_names_archive_and_fix(tmp_path: Path) -> None:
    zip_path = make_zip(
        tmp_path / "val2014.zip", {f"val2014/{i}.bin": bytes(2000) for i in range(5)}
    )
    zip_path.write_bytes(zip_path.read_bytes()[: zip_path.stat().st_size // 2])
    with pytest.raises(SourceError, match="val2014.zip is corrupt or truncated") as info:
        safe_extract_zip(zip_path, tmp_path / "out", corrupt_fix="rerun `the fetch` to get it")
    assert "rerun `the fetch` to get it" in str(info.value)
    with pytest.raises(SourceError, match="corrupt or truncated") as info:
        safe_extract_zip(zip_path, tmp_path / "out")
    assert "download it again" in str(info.value) and "coco" not in str(info.value)


def test_crc_error_extracts_nothing(tmp_path: Path) -> None:
    payload = b"A" * 4000
    zip_path = make_zip(
        tmp_path / "a.zip",
        {"good.txt": b"fine", "bad.txt": payload},
        compression=zipfile.ZIP_STORED,
    )
    raw = zip_path.read_bytes()
    zip_path.write_bytes(raw.replace(payload, b"B" + payload[1:]))  # same size, wrong CRC
    dest = tmp_path / "out"
    with pytest.raises(SourceError, match="corrupt or truncated"):
        safe_extract_zip(zip_path, dest)
    assert files_under(dest) == []  # good.txt was staged but never moved into place


def test_check_zip_accepts_a_sound_archive_and_refuses_a_spliced_one(tmp_path: Path) -> None:
    old, new = tmp_path / "old.zip", tmp_path / "new.zip"
    with zipfile.ZipFile(old, "w") as archive:
        for i in range(5):
            archive.writestr(f"data/file{i}.txt", b"old" * (330 + i))
    with zipfile.ZipFile(new, "w") as archive:
        for i in range(5):
            archive.writestr(f"data/file{i}.txt", b"changed upstream" * (70 + i))
    assert check_zip(old) == 5 and check_zip(new) == 5
    # a resume across an upstream change: the old head, the new tail (and its directory)
    spliced = tmp_path / "spliced.zip"
    cut = old.stat().st_size // 2
    spliced.write_bytes(old.read_bytes()[:cut] + new.read_bytes()[cut:])
    with pytest.raises(SourceError, match="corrupt, truncated or spliced") as info:
        check_zip(spliced)
    assert str(spliced) in str(info.value)
    truncated = tmp_path / "truncated.zip"
    truncated.write_bytes(new.read_bytes()[:-40])
    with pytest.raises(SourceError, match="spliced"):
        check_zip(truncated)


@pytest.fixture
def limits():
    """Restore the process-wide archive limits a test changes."""
    before = archive_limits()
    yield set_archive_limits
    set_archive_limits(before)


def test_a_zip_bomb_is_refused_before_anything_is_written_or_trusted(tmp_path: Path) -> None:
    bomb = write_zip_bomb(tmp_path / "bomb.zip", "data/zeros.bin")
    assert bomb.stat().st_size < 1 << 20
    dest = tmp_path / "out"
    with pytest.raises(SourceError) as info:
        safe_extract_zip(bomb, dest)
    message = str(info.value)
    assert "bomb.zip" in message and "would inflate" in message and "archives.max_ratio" in message
    assert not dest.exists() or files_under(dest) == []
    with pytest.raises(SourceError, match="archives.max_ratio"):
        check_zip(bomb)  # what a first download must pass before it is pinned


def test_member_count_and_total_size_are_bounded(tmp_path: Path, limits) -> None:
    many = make_zip(tmp_path / "many.zip", {f"f{i}.txt": b"x" for i in range(5)})
    limits(ArchiveLimits(max_members=4))
    with pytest.raises(SourceError, match=r"(?s)has 5 members \(at most 4\).*archives.max_members"):
        safe_extract_zip(many, tmp_path / "out")
    with pytest.raises(SourceError, match="archives.max_members"):
        check_zip(many)
    big = make_zip(tmp_path / "big.zip", {"a.bin": os.urandom(3 << 20)})
    limits(ArchiveLimits(max_total_gib=2 / 1024))  # 2 MiB
    with pytest.raises(SourceError, match=r"(?s)expand to .* GiB.*archives.max_total_gib"):
        safe_extract_zip(big, tmp_path / "out")
    limits(ArchiveLimits(max_total_gib=4 / 1024, max_members=5))  # within both: extracted
    assert len(safe_extract_zip(big, tmp_path / "out")) == 1
    assert len(safe_extract_zip(many, tmp_path / "out")) == 5


def test_a_member_that_lies_about_its_size_stops_at_its_declared_size(tmp_path: Path) -> None:
    """The bounds read the directory's sizes; a member whose data inflates past its declared
    size is cut there and fails its CRC check: nothing larger than declared is written."""
    honest = write_zip_bomb(tmp_path / "honest.zip", "data/zeros.bin", inflated_mib=8)
    raw = bytearray(honest.read_bytes())
    declared = struct.pack("<I", 8 << 20)
    for offset in (i for i in range(len(raw) - 3) if raw[i : i + 4] == declared):
        raw[offset : offset + 4] = struct.pack("<I", 1000)  # local header and directory
    liar = tmp_path / "liar.zip"
    liar.write_bytes(bytes(raw))
    with zipfile.ZipFile(liar) as archive:
        assert [i.file_size for i in archive.infolist()] == [1000]
    dest = tmp_path / "out"
    with pytest.raises(SourceError, match="corrupt or truncated"):
        safe_extract_zip(liar, dest)
    assert files_under(dest) == []


@pytest.mark.parametrize("value", [0, -1, "many", True])
def test_archive_limits_in_params_are_checked(value) -> None:
    from benchsmith.core.errors import BenchsmithError
    from benchsmith.core.limits import configure

    before = archive_limits()
    try:
        with pytest.raises(BenchsmithError, match="archives.max_ratio: expected a number >= 1"):
            configure({"archives": {"max_ratio": value}})
        configure({"archives": {"max_ratio": 7, "max_members": 9}})
        assert archive_limits() == ArchiveLimits(max_members=9, max_ratio=7.0)
    finally:
        set_archive_limits(before)
