"""Write-then-rename helpers: readers see the old or the new output, never a half-written one."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchsmith.core.atomic import (
    atomic_directory,
    atomic_path,
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
)
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.outputs import MARKER, OLD_MARKER_TEXT, mark


class Boom(Exception):
    pass


def names(folder: Path) -> list[str]:
    """What a user sees: the folder's files without benchsmith's marker and lock files."""
    return sorted(
        p.name for p in folder.iterdir() if p.name != MARKER and not p.name.endswith(".lock")
    )


def ours(folder: Path, files: dict[str, str]) -> Path:
    """A folder as an earlier benchsmith run leaves it: ``files`` written, and its marker."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = folder.parent / f"{folder.name}.making"
    for name, text in files.items():
        (staging / name).parent.mkdir(parents=True, exist_ok=True)
        (staging / name).write_text(text)
    staging.mkdir(exist_ok=True)
    mark(staging)
    staging.rename(folder)
    return folder


def test_atomic_write_bytes_replaces_content_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "out.bin"
    target.write_bytes(b"old content that is longer than the new one")
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new"
    assert names(tmp_path) == ["out.bin"]


def test_atomic_write_bytes_creates_missing_parent(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "out.bin"
    atomic_write_bytes(str(target), b"\x00\x01\x02")
    assert target.read_bytes() == b"\x00\x01\x02"
    assert names(target.parent) == ["out.bin"]


def test_atomic_write_text_is_utf8(tmp_path: Path) -> None:
    target = tmp_path / "caption.txt"
    atomic_write_text(target, "café – ☕")
    assert target.read_bytes() == "café – ☕".encode()


def test_atomic_write_json_replaces_content_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "info.json"
    atomic_write_json(target, {"old": True, "list": [1, 2, 3]})
    value = {"zeta": [1, 2], "alpha": {"nested": "é"}, "n": 3.5}
    atomic_write_json(target, value)
    assert json.loads(target.read_text(encoding="utf-8")) == value
    assert names(tmp_path) == ["info.json"]


def test_atomic_path_success_replaces_target(tmp_path: Path) -> None:
    target = tmp_path / "table.parquet"
    target.write_bytes(b"previous")
    with atomic_path(target) as tmp:
        assert tmp != target
        assert tmp.parent == tmp_path
        assert tmp.suffix == ".parquet"  # writers that pick a format by suffix still work
        # the writer creates it: an existing file it truncated would be flushed to disk on
        # close (ext4's auto_da_alloc), which cost a render 34 ms per 82 MB
        assert not os.path.lexists(tmp)
        tmp.write_bytes(b"fresh")
        assert target.read_bytes() == b"previous"  # not visible until the block ends
    assert target.read_bytes() == b"fresh"
    assert names(tmp_path) == ["table.parquet"]


@pytest.mark.parametrize("error", [Boom, KeyboardInterrupt])
def test_atomic_path_error_keeps_previous_file_and_removes_temp(
    tmp_path: Path, error: type[BaseException]
) -> None:
    target = tmp_path / "table.parquet"
    target.write_bytes(b"previous")
    with pytest.raises(error), atomic_path(target) as tmp:
        tmp.write_bytes(b"half written")
        raise error()
    assert target.read_bytes() == b"previous"
    assert names(tmp_path) == ["table.parquet"]


def test_atomic_path_error_without_previous_file_leaves_nothing(tmp_path: Path) -> None:
    target = tmp_path / "new.json"
    with pytest.raises(Boom), atomic_path(target) as tmp:
        tmp.write_text("{")
        raise Boom()
    assert names(tmp_path) == []


def test_atomic_directory_creates_new_folder(tmp_path: Path) -> None:
    target = tmp_path / "parent" / "plan"
    with atomic_directory(target) as staging:
        assert staging.is_dir()
        assert list(staging.iterdir()) == []
        assert staging.parent == target.parent
        (staging / "a.txt").write_text("a")
    assert names(target) == ["a.txt"]
    assert (target / MARKER).is_file()  # so a later run knows it may replace it
    assert names(target.parent) == ["plan"]


def test_atomic_directory_replaces_existing_folder_whole(tmp_path: Path) -> None:
    target = ours(tmp_path / "plan", {"old.txt": "old", "sub/old2.txt": "old",
                                      "keep_name.txt": "old version"})  # fmt: skip
    with atomic_directory(target) as staging:
        (staging / "keep_name.txt").write_text("new version")
        (staging / "new.txt").write_text("new")
        assert (target / "old.txt").exists()  # old output stays readable meanwhile
    assert names(target) == ["keep_name.txt", "new.txt"]
    assert (target / "keep_name.txt").read_text() == "new version"
    assert names(tmp_path) == ["plan"]


@pytest.mark.parametrize("error", [Boom, KeyboardInterrupt])
def test_atomic_directory_error_keeps_previous_folder_and_removes_staging(
    tmp_path: Path, error: type[BaseException]
) -> None:
    target = ours(tmp_path / "plan", {"old.txt": "old"})
    with pytest.raises(error), atomic_directory(target) as staging:
        (staging / "partial.txt").write_text("partial")
        raise error()
    assert names(target) == ["old.txt"]
    assert (target / "old.txt").read_text() == "old"
    assert names(tmp_path) == ["plan"]


def test_atomic_directory_error_without_previous_folder_leaves_nothing(tmp_path: Path) -> None:
    with pytest.raises(Boom), atomic_directory(tmp_path / "plan") as staging:
        (staging / "partial.txt").write_text("partial")
        raise Boom()
    assert names(tmp_path) == []


def test_atomic_directory_removes_stale_staging_from_earlier_crash(tmp_path: Path) -> None:
    target = ours(tmp_path / "plan", {"old.txt": "old"})
    stale = tmp_path / ".plan.tmp-abc123"
    (stale / "deep").mkdir(parents=True)
    (stale / "deep" / "junk.bin").write_bytes(b"junk")
    stale_old = tmp_path / ".plan.tmp-old-99999"
    stale_old.mkdir()
    (stale_old / "older.txt").write_text("older")
    unrelated = tmp_path / ".other.tmp-abc123"
    unrelated.mkdir()
    sibling = tmp_path / "plan_backup"
    sibling.mkdir()
    with atomic_directory(target) as staging:
        assert not stale.exists()
        assert not stale_old.exists()
        (staging / "new.txt").write_text("new")
    assert names(target) == ["new.txt"]
    assert names(tmp_path) == [".other.tmp-abc123", "plan", "plan_backup"]


def test_a_folder_benchsmith_did_not_write_is_never_replaced(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "thesis.tex").write_text("years of work")
    refusal = pytest.raises(BenchsmithError, match="holds files benchsmith did not write")
    with refusal as info, atomic_directory(victim) as staging:
        (staging / "x").write_text("x")
    assert str(victim) in str(info.value)
    assert names(victim) == ["thesis.tex"] and names(tmp_path) == ["victim"]
    (tmp_path / "a_file").write_text("not a folder")
    with (
        pytest.raises(BenchsmithError, match="not a folder"),
        atomic_directory(tmp_path / "a_file"),
    ):
        pass
    empty = tmp_path / "empty"
    empty.mkdir()
    with atomic_directory(empty) as staging:  # an empty folder holds nothing to lose
        (staging / "new.txt").write_text("new")
    assert names(empty) == ["new.txt"]


def test_a_name_alone_is_no_ownership_and_added_files_are_never_deleted(tmp_path: Path) -> None:
    """A folder is benchsmith's only while its marker accounts for every file in it: a file
    named like ours (another tool's build_info.json), a marker that is not benchsmith's, or
    a user's file added to (or changed in) an output benchsmith wrote: all refused, nothing
    deleted. An empty folder and an untouched output are replaced."""
    lookalike = tmp_path / "u"
    lookalike.mkdir()
    for name in ("build_info.json", "plan_info.json", "render_info.json"):
        (lookalike / name).write_text("{}")
    (lookalike / "results.csv").write_text("a,b\n1,2\n")
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / MARKER).write_text('{"written_by": "someone else", "files": {}}')
    (fake / "notes.txt").write_text("mine")
    for victim in (lookalike, fake):
        with (pytest.raises(BenchsmithError, match="did not write") as info,
              atomic_directory(victim) as staging):  # fmt: skip
            (staging / "x").write_text("x")
        assert MARKER in str(info.value) and "--out" in str(info.value)
    assert (lookalike / "results.csv").read_text() == "a,b\n1,2\n"
    assert (fake / "notes.txt").read_text() == "mine"

    out = ours(tmp_path / "out", {"data/a.parquet": "rows", "README.md": "card"})
    (out / "data" / "results.csv").write_text("my analysis")
    (out / "README.md").write_text("card, edited by hand")
    with (pytest.raises(BenchsmithError, match="2 file\\(s\\) in it were added or changed") as info,
          atomic_directory(out) as staging):  # fmt: skip
        (staging / "x").write_text("x")
    assert "README.md, data/results.csv" in str(info.value) and "move those" in str(info.value)
    assert (out / "data" / "results.csv").read_text() == "my analysis"
    (out / "data" / "results.csv").unlink()
    (out / "README.md").write_text("card")  # as written: the output is benchsmith's again
    with atomic_directory(out) as staging:
        (staging / "new.txt").write_text("new")
    assert names(out) == ["new.txt"]
    assert json.loads((out / MARKER).read_text())["files"] == {"new.txt": 3}


def test_a_marker_from_before_the_listing_is_still_honoured(tmp_path: Path) -> None:
    old = tmp_path / "old"
    (old / "data").mkdir(parents=True)
    (old / "data" / "rows.parquet").write_text("rows")
    (old / MARKER).write_text(OLD_MARKER_TEXT)
    with atomic_directory(old) as staging:
        (staging / "new.txt").write_text("new")
    assert names(old) == ["new.txt"]


def test_an_output_that_is_or_holds_an_input_is_refused(tmp_path: Path) -> None:
    plan = ours(tmp_path / "plan", {"plan_info.json": "{}"})
    for inputs in ([plan], [plan / "plan_info.json"]):
        with (
            pytest.raises(BenchsmithError, match="input") as info,
            atomic_directory(plan, inputs=inputs),
        ):
            pass
        assert "--out" in str(info.value)
    assert (plan / "plan_info.json").read_text() == "{}"
    with atomic_directory(tmp_path / "render", inputs=[plan]) as staging:
        (staging / "r").write_text("r")


def test_a_read_only_output_is_not_replaced(tmp_path: Path) -> None:
    target = ours(tmp_path / "plan", {"old.txt": "old"})
    target.chmod(0o555)
    try:
        with pytest.raises(BenchsmithError, match="read-only"), atomic_directory(target):
            pass
    finally:
        target.chmod(0o755)
    assert names(target) == ["old.txt"]


def test_a_second_run_on_the_same_output_refuses_while_the_first_writes(tmp_path: Path) -> None:
    target = tmp_path / "plan"
    with atomic_directory(target) as staging:
        (staging / "first.txt").write_text("first")
        refusal = pytest.raises(BenchsmithError, match="another benchsmith run is writing")
        with refusal, atomic_directory(target):
            pass
    assert names(target) == ["first.txt"]


def test_an_output_moved_aside_by_an_interrupted_swap_is_restored(tmp_path: Path) -> None:
    """A crash between the two renames leaves only the moved-aside output: never lost."""
    ours(tmp_path / ".plan.tmp-old-4242", {"built.txt": "the only copy"})
    target = tmp_path / "plan"
    with pytest.raises(Boom), atomic_directory(target):
        raise Boom()
    assert (target / "built.txt").read_text() == "the only copy"
    assert names(tmp_path) == ["plan"]


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_written_files_and_folders_get_the_permissions_the_umask_gives(tmp_path, umask):
    """Temporary files are made 0600 and folders 0700; what is published must not stay so."""
    import os
    import stat

    old = os.umask(umask)
    try:
        atomic_write_text(tmp_path / "README.md", "card")
        atomic_write_json(tmp_path / "build_info.json", {})
        with atomic_path(tmp_path / "leakage.json") as tmp:
            tmp.write_text("{}")
        with atomic_directory(tmp_path / "published") as staging:
            atomic_write_text(staging / "README.md", "card")
    finally:
        os.umask(old)
    files = ["README.md", "build_info.json", "leakage.json", "published/README.md"]
    for name in files:
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o666 & ~umask, name
    assert stat.S_IMODE((tmp_path / "published").stat().st_mode) == 0o777 & ~umask
