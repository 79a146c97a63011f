"""Extract zip archives without trusting their member names.

A zip can name members ``../x``, ``/etc/x`` or ``C:\\x``, or carry symlinks that redirect later
writes; ``zipfile.extractall`` only half-defends against this. Every member is checked before
anything is written, selected members are written to a staging folder inside ``dest`` and
each file is then moved into place with ``os.replace``, so ``dest`` never holds half a file.

A zip can also be a bomb: a megabyte that inflates to gigabytes, or a million empty members.
Before anything is pinned or written, its central directory is held to ``archives:`` in
params.yaml (:class:`benchsmith.core.limits.ArchiveLimits`): member count, total uncompressed
size, and inflation ratio. The directory's sizes are what extraction may write: ``zipfile``
stops a member at its declared size and fails its CRC check if the data says otherwise.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from benchsmith.core.errors import SourceError
from benchsmith.core.limits import ArchiveLimits, archive_limits
from benchsmith.core.progress import progress

_DRIVE = re.compile(r"^[A-Za-z]:")
_JUNK_PREFIX = "__MACOSX/"
_CORRUPT = (zipfile.BadZipFile, zlib.error, EOFError)
_FIX_CORRUPT = "delete it and download it again"
RATIO_FLOOR = 1 << 20  # members smaller than this may inflate as they like (tiny text files)


def safe_extract_zip(
    zip_path: Path,
    dest: Path,
    *,
    members: Callable[[str], bool] | None = None,
    corrupt_fix: str = _FIX_CORRUPT,
) -> list[Path]:
    """Extract the files of ``zip_path`` for which ``members(name)`` is true into ``dest``.

    Names are passed with ``/`` separators (e.g. ``val2014/COCO_val2014_...jpg``). Directory
    entries and ``__MACOSX/`` junk are skipped. Returns the extracted paths, in archive order.
    ``corrupt_fix`` is the fix a corrupt or truncated archive reports: each source names the
    command that fetches its archive again.
    """
    zip_path, dest = Path(zip_path), Path(dest)
    try:
        with zipfile.ZipFile(zip_path) as archive:
            selected = _select(archive, zip_path, members)
            _refuse_a_bomb(zip_path, [info for info, _ in selected], archive_limits(),
                           "refusing to extract")  # fmt: skip
            dest.mkdir(parents=True, exist_ok=True)
            return _extract(archive, selected, dest, zip_path)
    except _CORRUPT as exc:
        raise SourceError(
            f"archive {zip_path.name} is corrupt or truncated ({exc})",
            path=zip_path,
            fix=corrupt_fix,
        ) from exc


_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")  # the 30-byte local file header of a zip member
_LOCAL_SIGNATURE = b"PK\x03\x04"


def check_zip(zip_path: Path, *, corrupt_fix: str = _FIX_CORRUPT) -> int:
    """Check that ``zip_path`` is an archive benchsmith can trust, without extracting it.

    It must open (a central directory), every member name must be safe, and every member's
    local header must sit where the directory says, under the same name: a file spliced from
    two versions (a resume across an upstream change) or cut short fails here in seconds,
    before its checksum is pinned in a lock file. Returns the number of members.
    """
    zip_path = Path(zip_path)
    try:
        with zipfile.ZipFile(zip_path) as archive, open(zip_path, "rb") as raw:
            infos = archive.infolist()
            _refuse_a_bomb(zip_path, infos, archive_limits(), "refusing")
            for info in infos:
                problem = member_problem(info)
                if problem:
                    raise SourceError(
                        f"refusing {zip_path.name}: member {info.filename!r} {problem}",
                        path=zip_path,
                        fix="this is not an archive benchsmith can trust; check the URL",
                    )
                raw.seek(info.header_offset)
                header = raw.read(_LOCAL_HEADER.size)
                if len(header) < _LOCAL_HEADER.size:
                    raise zipfile.BadZipFile(f"member {info.filename!r} lies past the end")
                fields = _LOCAL_HEADER.unpack(header)
                name = raw.read(fields[9])
                if fields[0] != _LOCAL_SIGNATURE or name != _encoded_name(info):
                    raise zipfile.BadZipFile(
                        f"member {info.filename!r} is not where the directory says"
                    )
            return len(infos)
    except _CORRUPT as exc:
        raise SourceError(
            f"archive {zip_path.name} is corrupt, truncated or spliced ({exc})",
            path=zip_path,
            fix=corrupt_fix,
        ) from exc


def bomb_problem(infos: list[zipfile.ZipInfo], archive_bytes: int,
                 limits: ArchiveLimits) -> tuple[str, str] | None:  # fmt: skip
    """Why these members may not be expanded, and the ``archives.`` key that bounds it; None
    when they are within ``limits``."""
    if len(infos) > limits.max_members:
        return f"has {len(infos):,} members (at most {limits.max_members:,})", "max_members"
    total = sum(info.file_size for info in infos)
    if total > limits.max_total_bytes:
        return (f"would expand to {total / 1024**3:,.1f} GiB "
                f"(at most {limits.max_total_gib:g} GiB)", "max_total_gib")  # fmt: skip
    for info in infos:
        if info.file_size > RATIO_FLOOR and info.file_size > limits.max_ratio * max(
            info.compress_size, 1
        ):
            ratio = info.file_size / max(info.compress_size, 1)
            return (f"member {info.filename!r} would inflate {ratio:,.0f}x to "
                    f"{info.file_size / 1024**2:,.0f} MiB (at most {limits.max_ratio:g}x)",
                    "max_ratio")  # fmt: skip
    if total > RATIO_FLOOR and total > limits.max_ratio * max(archive_bytes, 1):
        return (f"would inflate {total / max(archive_bytes, 1):,.0f}x, from "
                f"{archive_bytes:,} bytes to {total:,} (at most {limits.max_ratio:g}x)",
                "max_ratio")  # fmt: skip
    return None


def _refuse_a_bomb(zip_path: Path, infos: list[zipfile.ZipInfo], limits: ArchiveLimits,
                   verb: str) -> None:  # fmt: skip
    found = bomb_problem(infos, zip_path.stat().st_size, limits)
    if found:
        problem, key = found
        raise SourceError(
            f"{verb} {zip_path.name}: it {problem}",
            path=zip_path,
            fix=f"this is not the archive the source serves (a zip bomb?); if it is genuine, "
            f"raise archives.{key} in params.yaml",
        )


def _encoded_name(info: zipfile.ZipInfo) -> bytes:
    """The member name as stored in its local header (UTF-8 when flagged, else cp437)."""
    if info.flag_bits & 0x800:
        return info.filename.encode("utf-8")
    try:
        return info.orig_filename.encode("cp437")
    except UnicodeEncodeError:
        return info.orig_filename.encode("utf-8")


def member_problem(info: zipfile.ZipInfo) -> str | None:
    """Why a member may not be extracted, or None when it is safe."""
    name = info.filename.replace("\\", "/")
    if name.startswith("/"):
        return "has an absolute path"
    if _DRIVE.match(name):
        return "has a drive letter"
    if ".." in name.split("/"):
        return "has a `..` component"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "is a symbolic link"
    return None


def _select(
    archive: zipfile.ZipFile, zip_path: Path, members: Callable[[str], bool] | None
) -> list[tuple[zipfile.ZipInfo, PurePosixPath]]:
    """Check every member (an archive with one hostile name is refused whole) and pick files."""
    selected = []
    for info in archive.infolist():
        problem = member_problem(info)
        if problem:
            raise SourceError(
                f"refusing to extract {zip_path.name}: member {info.filename!r} {problem}",
                path=zip_path,
                fix="this is not an archive benchsmith can trust; delete it and download it again",
            )
        name = info.filename.replace("\\", "/")
        if info.is_dir() or name.startswith(_JUNK_PREFIX):
            continue
        relative = PurePosixPath(*[part for part in name.split("/") if part not in ("", ".")])
        if not relative.parts:
            continue
        if members is None or members(relative.as_posix()):
            selected.append((info, relative))
    return selected


def _extract(
    archive: zipfile.ZipFile,
    selected: list[tuple[zipfile.ZipInfo, PurePosixPath]],
    dest: Path,
    zip_path: Path,
) -> list[Path]:
    prefix = f".{zip_path.name}.tmp-"
    for stale in dest.glob(prefix + "*"):  # left behind by an interrupted run
        shutil.rmtree(stale, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(prefix=prefix, dir=dest))
    try:
        staged = []
        for info, relative in progress(
            selected, total=len(selected), desc=f"extract {zip_path.name}", unit="file"
        ):
            target = staging.joinpath(*relative.parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as source, open(target, "wb") as sink:
                shutil.copyfileobj(source, sink, 1 << 20)  # raises BadZipFile on a CRC error
            staged.append((target, dest.joinpath(*relative.parts)))
        for target, final in staged:  # only once every member was read back intact
            final.parent.mkdir(parents=True, exist_ok=True)
            os.replace(target, final)
        return [final for _, final in staged]
    finally:
        shutil.rmtree(staging, ignore_errors=True)
