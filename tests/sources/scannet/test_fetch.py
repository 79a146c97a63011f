"""Fetching selected ScanNet scenes from a server on 127.0.0.1 that serves the real v2 layout
(``v2/scans/<scene>/<scene><suffix>``, ``v2/tasks/scannetv2-labels.combined.tsv``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from http_server import FileServer

from benchsmith.cli import main
from benchsmith.core.errors import SourceError
from benchsmith.sources.scannet.fetch import SCENE_FILES, fetch_scannet
from benchsmith.sources.scannet.sample import write_sample_scannet
from benchsmith.sources.scannet.scene import LABELS_FILE
from benchsmith.sources.scannet.source import check_scannet


@pytest.fixture()
def served(tmp_path) -> Path:
    """The sample scenes laid out as the ScanNet server has them."""
    sample = write_sample_scannet(tmp_path / "sample")
    root = tmp_path / "srv"
    shutil.copytree(sample / "scans", root / "v2" / "scans")
    (root / "v2" / "tasks").mkdir(parents=True)
    shutil.copy(sample / LABELS_FILE, root / "v2" / "tasks" / LABELS_FILE)
    return root


def test_fetch_resumes_pins_and_verifies(served, tmp_path):
    lock = tmp_path / "scannet.lock.json"
    out = tmp_path / "out"
    with FileServer(served) as server:
        sens = "v2/scans/scene0001_00/scene0001_00.sens"
        server.cut_after[sens] = 4000  # the stream's first transfer breaks off
        root = fetch_scannet(
            out, base_url=server.url("").rstrip("/"), scenes="scene0001_00", lock=lock
        )
        ranges = [r.range for r in server.requests_for(sens)]
        assert ranges == [None, "bytes=4000-"]  # resumed, not restarted
        assert not any("scene0000_00" in r.name for r in server.requests)  # only what was asked
    for suffix in SCENE_FILES:
        name = f"scene0001_00{suffix}"
        fetched = root / "scans" / "scene0001_00" / name
        assert fetched.read_bytes() == (served / "v2/scans/scene0001_00" / name).read_bytes()
    assert check_scannet(root)["scenes"] == 1
    pinned = json.loads(lock.read_text())
    assert len(pinned) == len(SCENE_FILES) + 1
    assert "127.0.0.1" not in lock.read_text()  # the approval's server is not written down
    # a rerun verifies against the lock without the network
    assert fetch_scannet(out, base_url="http://127.0.0.1:9", scenes=["scene0001_00"], lock=lock)
    # a file changed upstream is caught against the lock
    changed = served / "v2/scans/scene0001_00/scene0001_00.txt"
    changed.write_text(changed.read_text() + "extra = 1\n")
    (root / "scans/scene0001_00/scene0001_00.txt").unlink()
    with (
        FileServer(served) as server,
        pytest.raises(SourceError, match="does not match the checksum"),
    ):
        fetch_scannet(out, base_url=server.url(""), scenes="scene0001_00", lock=lock)


def test_a_file_that_is_not_scannet_is_refused_not_pinned(served, tmp_path):
    bad = served / "v2/scans/scene0000_00/scene0000_00.sens"
    bad.write_bytes(b"<html>please log in</html>")
    lock = tmp_path / "lock.json"
    with FileServer(served) as server, pytest.raises(SourceError, match="refused") as error:
        fetch_scannet(tmp_path / "out", base_url=server.url(""), scenes="scene0000_00", lock=lock)
    assert "scene0000_00.sens" in str(error.value)
    pinned = json.loads(lock.read_text())
    assert not any(key.endswith(".sens") for key in pinned)


def test_no_base_url_or_bad_scene_ids_are_clear_errors(tmp_path, capsys):
    out = str(tmp_path / "out")
    assert main(["source", "fetch", "scannet", "--out", out, "--scenes", "scene0000_00"]) == 2
    err = capsys.readouterr().err
    assert "ScanNet access approval" in err and "--base-url" in err
    argv = ["source", "fetch", "scannet", "--out", out, "--base-url", "http://127.0.0.1:9"]
    assert main([*argv, "--scenes", "room1"]) == 2
    assert "scene ids must look like scene0000_00" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("served_as", "content", "reason"),
    [
        ("scene0000_00.aggregation.json", '{"error": "login required"}', "no 'segGroups' list"),
        ("scene0000_00_vh_clean_2.0.010000.segs.json", "[1, 2, 3]", "no 'segIndices' list"),
        (LABELS_FILE, "<html>please log in</html>\n", "label map lacks"),
        (LABELS_FILE, "id\traw_category\tcategory\tnyu40class\n", "label map lacks"),
    ],
)
def test_metadata_that_only_parses_is_refused_and_the_real_file_then_pins(
    served, tmp_path, served_as, content, reason
):
    """A login page answered as JSON, a one-line TSV: refused before pinning, kept as
    ``.refused``; once the server serves the real file, the next fetch pins it."""
    where = (served / "v2/tasks" if served_as == LABELS_FILE
             else served / "v2/scans/scene0000_00") / served_as  # fmt: skip
    real = where.read_bytes()
    where.write_text(content)
    lock, out = tmp_path / "lock.json", tmp_path / "out"
    with FileServer(served) as server, pytest.raises(SourceError, match="refused") as error:
        fetch_scannet(out, base_url=server.url(""), scenes="scene0000_00", lock=lock)
    assert reason in str(error.value) and served_as in str(error.value)
    pinned = json.loads(lock.read_text()) if lock.exists() else {}
    assert not any(key.endswith(served_as) for key in pinned)
    assert next(out.rglob(f"{served_as}.refused")).read_text() == content
    where.write_bytes(real)
    with FileServer(served) as server:
        fetch_scannet(out, base_url=server.url(""), scenes="scene0000_00", lock=lock)
    assert any(key.endswith(served_as) for key in json.loads(lock.read_text()))


def test_a_metadata_file_larger_than_any_real_one_is_refused_unread(served, tmp_path):
    from benchsmith.sources.scannet.fetch import check_downloaded

    huge = tmp_path / "scene0000_00.aggregation.json"
    huge.write_text('{"segGroups": [' + "0," * 600 + "0]}")
    with pytest.raises(SourceError, match="larger than any real ScanNet json"):
        check_downloaded(huge, max_metadata_bytes=1000)
    assert not huge.exists() and huge.with_name(huge.name + ".refused").exists()
