"""fetch_coco end to end against a local server serving zips in the real COCO layout."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from archive_bombs import write_zip_bomb
from http_server import FileServer

from benchsmith.core.errors import SourceError
from benchsmith.sources.coco.fetch import MARKER_NAME, fetch_coco, link_local_coco
from benchsmith.sources.coco.reader import CAPTIONS_RELPATH, read_captions
from benchsmith.sources.coco.sample import write_sample_coco
from benchsmith.sources.fetching import download
from benchsmith.sources.fetching.lockfile import read_lock

N_IMAGES = 20
ANNOTATIONS_ZIP = "annotations_trainval2014.zip"
IMAGES_ZIP = "val2014.zip"


def build_coco_zips(sample: Path, srv: Path) -> None:
    """Zip a sample the way COCO ships it: top-level ``annotations/`` and ``val2014/`` folders.

    Entries carry a fixed date, so an archive changes only when its files' bytes do (zipping the
    same sample twice a second apart gives the same archive, as a real unchanged upstream does)."""
    srv.mkdir(parents=True, exist_ok=True)

    def add(archive: zipfile.ZipFile, name: str, data: bytes) -> None:
        info = zipfile.ZipInfo(name, date_time=(2014, 9, 1, 0, 0, 0))
        info.compress_type = archive.compression
        archive.writestr(info, data)

    with zipfile.ZipFile(srv / ANNOTATIONS_ZIP, "w", zipfile.ZIP_DEFLATED) as archive:
        add(archive, "annotations/", b"")
        add(archive, CAPTIONS_RELPATH.as_posix(), (sample / CAPTIONS_RELPATH).read_bytes())
        add(archive, "annotations/instances_val2014.json",
            json.dumps({"annotations": []}).encode())  # fmt: skip
    with zipfile.ZipFile(srv / IMAGES_ZIP, "w", zipfile.ZIP_STORED) as archive:
        add(archive, "val2014/", b"")
        for image in sorted((sample / "val2014").iterdir()):
            add(archive, f"val2014/{image.name}", image.read_bytes())


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(download, "RETRY_BACKOFF_S", 0.0)


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return write_sample_coco(tmp_path / "sample", n_images=N_IMAGES, seed=0)


@pytest.fixture
def server(tmp_path: Path, sample: Path) -> Iterator[FileServer]:
    with FileServer(tmp_path / "srv") as srv:
        build_coco_zips(sample, srv.root)
        yield srv


def fetch(server: FileServer, tmp_path: Path, *, downloads: str = "downloads") -> Path:
    return fetch_coco(
        tmp_path / "coco",
        download_dir=tmp_path / downloads,
        annotations_url=server.url(ANNOTATIONS_ZIP),
        images_url=server.url(IMAGES_ZIP),
        lock_path=tmp_path / "coco.lock.json",
    )


def test_fetch_end_to_end(server: FileServer, tmp_path: Path, sample: Path) -> None:
    out = fetch(server, tmp_path)
    captions = read_captions(out / CAPTIONS_RELPATH)
    assert len(captions.images) == N_IMAGES
    assert captions.sha256 == read_captions(sample / CAPTIONS_RELPATH).sha256
    for image in captions.images:
        assert (out / "val2014" / image.file_name).read_bytes() == (
            sample / "val2014" / image.file_name
        ).read_bytes()
    assert sorted(p.name for p in (out / "annotations").iterdir()) == ["captions_val2014.json"]
    assert not list(out.glob(".*.tmp-*"))
    lock = read_lock(tmp_path / "coco.lock.json")
    assert lock[server.url(IMAGES_ZIP)]["file"] == IMAGES_ZIP
    assert lock[server.url(IMAGES_ZIP)]["size"] == (server.root / IMAGES_ZIP).stat().st_size
    marker = json.loads((out / MARKER_NAME).read_text())
    assert marker["images"]["sha256"] == lock[server.url(IMAGES_ZIP)]["sha256"]


def test_second_fetch_downloads_and_extracts_nothing(server: FileServer, tmp_path: Path) -> None:
    out = fetch(server, tmp_path)
    seen = len(server.requests)
    captions_mtime = (out / CAPTIONS_RELPATH).stat().st_mtime_ns
    fetch(server, tmp_path)
    assert len(server.requests) == seen
    assert (out / CAPTIONS_RELPATH).stat().st_mtime_ns == captions_mtime


def test_incomplete_extraction_is_redone(server: FileServer, tmp_path: Path) -> None:
    out = fetch(server, tmp_path)
    (out / CAPTIONS_RELPATH).unlink()
    (out / MARKER_NAME).unlink()
    fetch(server, tmp_path)
    assert read_captions(out / CAPTIONS_RELPATH).images


def test_interrupted_download_resumes_byte_identical(server: FileServer, tmp_path: Path) -> None:
    server.cut_after[IMAGES_ZIP] = 4096
    fetch(server, tmp_path)
    assert [r.range for r in server.requests_for(IMAGES_ZIP)] == [None, "bytes=4096-"]
    downloaded = tmp_path / "downloads" / IMAGES_ZIP
    assert downloaded.read_bytes() == (server.root / IMAGES_ZIP).read_bytes()


def test_changed_server_file_fails_the_lock_checksum(
    server: FileServer, tmp_path: Path, sample: Path
) -> None:
    fetch(server, tmp_path)
    (sample / "val2014" / "extra.txt").write_text("upstream changed")
    build_coco_zips(sample, server.root)
    with pytest.raises(SourceError, match="checksum") as info:
        fetch(server, tmp_path, downloads="fresh-downloads")
    assert "coco.lock.json" in str(info.value) and "`benchsmith source fetch coco`" in str(
        info.value
    )
    assert not (tmp_path / "fresh-downloads" / IMAGES_ZIP).exists()


def test_a_zip_bomb_is_refused_not_pinned_and_the_real_archive_then_fetches(
    server: FileServer, tmp_path: Path, sample: Path
) -> None:
    real = (server.root / ANNOTATIONS_ZIP).read_bytes()
    write_zip_bomb(server.root / ANNOTATIONS_ZIP, CAPTIONS_RELPATH.as_posix())
    with pytest.raises(SourceError, match="refused and not recorded") as info:
        fetch(server, tmp_path)
    assert "archives.max_ratio" in str(info.value) and ANNOTATIONS_ZIP in str(info.value)
    lock = tmp_path / "coco.lock.json"
    assert not lock.exists() or server.url(ANNOTATIONS_ZIP) not in read_lock(lock)
    assert (tmp_path / "downloads" / f"{ANNOTATIONS_ZIP}.refused").is_file()  # for inspection
    assert not (tmp_path / "coco" / CAPTIONS_RELPATH).exists()
    (server.root / ANNOTATIONS_ZIP).write_bytes(real)  # the server serves the real archive
    out = fetch(server, tmp_path)
    assert len(read_captions(out / CAPTIONS_RELPATH).images) == N_IMAGES


def test_unpin_lists_pins_and_clearing_one_accepts_a_real_upstream_change(
    server: FileServer, tmp_path: Path, sample: Path, capsys, monkeypatch
) -> None:
    from benchsmith.cli import main

    fetch(server, tmp_path)
    lock = tmp_path / "coco.lock.json"
    monkeypatch.chdir(tmp_path / "..")  # another working directory: --lock names the file
    assert main(["source", "unpin", "coco", "--lock", str(lock)]) == 0
    listed = capsys.readouterr().out.split()
    assert sorted(listed) == sorted(read_lock(lock)) and len(listed) == 2
    (sample / "val2014" / "extra.txt").write_text("upstream changed")
    build_coco_zips(sample, server.root)
    with pytest.raises(SourceError, match="checksum") as info:
        fetch(server, tmp_path, downloads="fresh")
    assert f"benchsmith source unpin coco {server.url(IMAGES_ZIP)}" in str(info.value)
    assert main(["source", "unpin", "coco", "no-such-url", "--lock", str(lock)]) == 2
    assert "not pinned" in capsys.readouterr().err
    assert main(["source", "unpin", "coco", server.url(IMAGES_ZIP), "--lock", str(lock)]) == 0
    assert server.url(IMAGES_ZIP) not in read_lock(lock)
    assert server.url(ANNOTATIONS_ZIP) in read_lock(lock)  # the other pin stays
    fetch(server, tmp_path, downloads="fresh")  # the new version is downloaded and pinned
    assert (
        read_lock(lock)[server.url(IMAGES_ZIP)]["size"] == (server.root / IMAGES_ZIP).stat().st_size
    )


def test_404_names_the_url(server: FileServer, tmp_path: Path) -> None:
    url = server.url("zips/nope.zip")
    with pytest.raises(SourceError, match="HTTP 404") as info:
        fetch_coco(
            tmp_path / "coco",
            download_dir=tmp_path / "downloads",
            annotations_url=server.url(ANNOTATIONS_ZIP),
            images_url=url,
            lock_path=tmp_path / "coco.lock.json",
        )
    assert url in str(info.value)
    assert not (tmp_path / "coco").exists()


def test_malformed_lock_names_the_file(server: FileServer, tmp_path: Path) -> None:
    (tmp_path / "coco.lock.json").write_text("{not json")
    with pytest.raises(SourceError, match="lock file is not valid JSON") as info:
        fetch(server, tmp_path)
    assert "coco.lock.json" in str(info.value) and "fix:" in str(info.value)


def test_link_local_coco(tmp_path: Path, sample: Path) -> None:
    out = tmp_path / "coco"
    assert link_local_coco(sample, out) == out
    assert (out / "annotations").is_symlink() and (out / "val2014").is_symlink()
    assert len(read_captions(out / CAPTIONS_RELPATH).images) == N_IMAGES
    other = write_sample_coco(tmp_path / "other", n_images=3, seed=1)
    link_local_coco(other, out)  # existing links are replaced
    assert (out / "val2014").resolve() == (other / "val2014").resolve()


def test_link_local_coco_without_val2014_is_clear(tmp_path: Path, sample: Path) -> None:
    broken = tmp_path / "broken"
    (broken / "annotations").mkdir(parents=True)
    (broken / CAPTIONS_RELPATH).write_bytes((sample / CAPTIONS_RELPATH).read_bytes())
    with pytest.raises(SourceError, match="missing val2014/") as info:
        link_local_coco(broken, tmp_path / "coco")
    assert str(broken) in str(info.value)
    assert not (tmp_path / "coco").exists()


def test_fetch_replaces_links_to_a_local_copy(
    server: FileServer, tmp_path: Path, sample: Path
) -> None:
    out = link_local_coco(sample, tmp_path / "coco")
    fetch(server, tmp_path)
    assert not (out / "val2014").is_symlink()
    assert len(list((sample / "val2014").iterdir())) == N_IMAGES + 1  # local copy untouched
