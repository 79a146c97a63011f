"""Old runs' temporary folders: the ones pytest would remove, removed after the run exits."""

from __future__ import annotations

from pathlib import Path

from _pytest.pathlib import cleanup_candidates
from old_temp_dirs import ASIDE, defer_removal, removable


def _run_folder(root: Path, name: str, files: int = 3) -> Path:
    folder = root / name
    (folder / "popen-gw0" / "deep").mkdir(parents=True)
    for i in range(files):
        (folder / "popen-gw0" / "deep" / f"f{i}.bin").write_bytes(b"x" * 1000)
    return folder


def test_what_pytest_would_remove_is_removed_after_the_run_and_nothing_else(tmp_path):
    root = tmp_path / "pytest-of-someone"
    runs = {n: _run_folder(root, f"pytest-{n}") for n in range(1, 7)}
    (runs[2] / ".lock").write_text("12345")  # a session still running there
    garbage = _run_folder(root, "garbage-0a1b")
    leftover = _run_folder(root / ASIDE, "pytest-0-deadbeef")  # set aside, never deleted
    (root / "pytest-current").symlink_to(runs[6], target_is_directory=True)
    elsewhere = _run_folder(tmp_path, "not-pytest")  # outside the root: never touched

    expected = {runs[1], runs[3], garbage, leftover}
    assert set(removable(root, keep=3)) == expected
    # pytest's own list: the same run folders, with the held one and its `pytest-current` link
    pytests = set(cleanup_candidates(root, "pytest-", 3))
    assert pytests == {runs[1], runs[2], runs[3], root / "pytest-current"}

    process = defer_removal(root, keep=3)
    assert process is not None and process.wait(timeout=60) == 0
    for folder in expected:
        assert not folder.exists(), folder
    assert list((root / ASIDE).iterdir()) == []
    for n in (2, 4, 5, 6):
        assert (runs[n] / "popen-gw0" / "deep" / "f0.bin").is_file(), n
    assert (root / "pytest-current").resolve() == runs[6].resolve()
    assert (elsewhere / "popen-gw0" / "deep" / "f2.bin").is_file()
    assert defer_removal(root, keep=3) is None  # nothing left to remove: no process


def test_the_folders_are_moved_aside_before_the_run_exits(tmp_path):
    """The move happens at once (pytest's own exit clean-up then finds nothing to remove); only
    the deletion waits."""
    root = tmp_path / "pytest-of-someone"
    for n in range(1, 5):
        _run_folder(root, f"pytest-{n}", files=50)
    process = defer_removal(root, keep=1)
    names = sorted(p.name for p in root.iterdir())
    assert names == [ASIDE, "pytest-4"]
    assert list(cleanup_candidates(root, "pytest-", 1)) == []
    process.wait(timeout=60)
