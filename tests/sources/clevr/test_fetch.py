"""fetch_clevr end to end against a local server serving a zip in the official CLEVR layout."""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from archive_bombs import write_zip_bomb
from http_server import FileServer

from benchsmith.core.errors import SourceError
from benchsmith.sources.clevr.fetch import MARKER_NAME, fetch_clevr, link_local_clevr
from benchsmith.sources.clevr.reader import CLEVR_URL, read_clevr_scenes
from benchsmith.sources.clevr.sample import write_sample_clevr
from benchsmith.sources.fetching import download
from benchsmith.sources.fetching.lockfile import read_lock

ZIP_NAME = "CLEVR_v1.0.zip"


def build_clevr_zip(sample: Path, zip_path: Path, *, extra: dict[str, bytes] | None = None) -> None:
    """Zip a sample like the official archive: ``CLEVR_v1.0/`` on top, test images, questions."""
    zip_path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(zip_path, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("CLEVR_v1.0/", b"")
        archive.writestr("CLEVR_v1.0/LICENSE.txt", b"Creative Commons Attribution 4.0\n")
        for path in sorted(sample.rglob("*")):
            if path.is_file():
                archive.write(path, f"CLEVR_v1.0/{path.relative_to(sample).as_posix()}")
        archive.writestr("CLEVR_v1.0/images/test/CLEVR_test_000000.png", b"not needed")
        archive.writestr("CLEVR_v1.0/questions/CLEVR_val_questions.json", b'{"questions": []}')
        archive.writestr("__MACOSX/CLEVR_v1.0/._LICENSE.txt", b"junk")
        for name, data in (extra or {}).items():
            archive.writestr(name, data)


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(download, "RETRY_BACKOFF_S", 0.0)


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_clevr(tmp_path_factory.mktemp("clevr"), n_train=4, n_val=3)


@pytest.fixture
def server(tmp_path: Path, sample: Path) -> Iterator[FileServer]:
    with FileServer(tmp_path / "srv") as srv:
        build_clevr_zip(sample, srv.root / ZIP_NAME)
        yield srv


def fetch(
    server: FileServer, tmp_path: Path, *, name: str = ZIP_NAME, downloads: str = "dl"
) -> Path:
    return fetch_clevr(
        tmp_path / "data",
        url=server.url(name),
        lock_path=tmp_path / "sources.lock.json",
        download_dir=tmp_path / downloads,
    )


def test_official_url() -> None:
    assert CLEVR_URL == "https://dl.fbaipublicfiles.com/clevr/CLEVR_v1.0.zip"


def test_fetch_end_to_end(server: FileServer, tmp_path: Path, sample: Path) -> None:
    root = fetch(server, tmp_path)
    assert root == tmp_path / "data" / "CLEVR_v1.0"
    for split in ("train", "val"):
        scenes = read_clevr_scenes(root, split)
        assert [s.image_filename for s in scenes] == [
            s.image_filename for s in read_clevr_scenes(sample, split)
        ]
        for scene in scenes:
            assert (
                scene.image_path.read_bytes()
                == (sample / "images" / split / scene.image_filename).read_bytes()
            )
    assert (root / "LICENSE.txt").is_file()
    assert not (root / "images" / "test").exists() and not (root / "questions").exists()
    assert not (tmp_path / "data" / "__MACOSX").exists()
    lock = read_lock(tmp_path / "sources.lock.json")
    entry = lock[server.url(ZIP_NAME)]
    assert entry["file"] == ZIP_NAME and entry["size"] == (server.root / ZIP_NAME).stat().st_size
    marker = json.loads((tmp_path / "data" / MARKER_NAME).read_text())
    assert marker["sha256"] == entry["sha256"] and marker["splits"] == ["train", "val"]


def test_default_download_dir_is_inside_dest(server: FileServer, tmp_path: Path) -> None:
    root = fetch_clevr(
        tmp_path / "data", url=server.url(ZIP_NAME), lock_path=tmp_path / "lock.json"
    )
    assert (tmp_path / "data" / "downloads" / ZIP_NAME).is_file()
    assert len(read_clevr_scenes(root, "val")) == 3


def test_second_fetch_is_a_no_op(server: FileServer, tmp_path: Path) -> None:
    root = fetch(server, tmp_path)
    requests = len(server.requests)
    scenes_file = root / "scenes" / "CLEVR_train_scenes.json"
    mtime = scenes_file.stat().st_mtime_ns
    assert fetch(server, tmp_path) == root
    assert len(server.requests) == requests
    assert scenes_file.stat().st_mtime_ns == mtime


def test_incomplete_extraction_is_redone(server: FileServer, tmp_path: Path) -> None:
    root = fetch(server, tmp_path)
    (root / "scenes" / "CLEVR_val_scenes.json").unlink()
    fetch(server, tmp_path)
    assert len(read_clevr_scenes(root, "val")) == 3


def test_interrupted_download_resumes(server: FileServer, tmp_path: Path) -> None:
    server.cut_after[ZIP_NAME] = 3000
    fetch(server, tmp_path)
    assert [r.range for r in server.requests_for(ZIP_NAME)] == [None, "bytes=3000-"]
    assert (tmp_path / "dl" / ZIP_NAME).read_bytes() == (server.root / ZIP_NAME).read_bytes()


def test_checksum_mismatch_is_an_error(server: FileServer, tmp_path: Path, sample: Path) -> None:
    fetch(server, tmp_path)
    build_clevr_zip(sample, server.root / ZIP_NAME, extra={"CLEVR_v1.0/README.txt": b"changed"})
    with pytest.raises(SourceError, match="checksum") as info:
        fetch(server, tmp_path, downloads="fresh")
    assert "sources.lock.json" in str(
        info.value
    ) and "rerun `benchsmith source fetch clevr`" in str(info.value)
    assert not (tmp_path / "fresh" / ZIP_NAME).exists()


def test_truncated_zip_names_the_clevr_fetch(server: FileServer, tmp_path: Path) -> None:
    whole = (server.root / ZIP_NAME).read_bytes()
    (server.root / "cut" / ZIP_NAME).parent.mkdir()
    (server.root / "cut" / ZIP_NAME).write_bytes(whole[: len(whole) // 2])
    with pytest.raises(SourceError, match="corrupt, truncated or spliced") as info:
        fetch(server, tmp_path, name=f"cut/{ZIP_NAME}")
    assert "rerun `benchsmith source fetch clevr`" in str(info.value) and "coco" not in str(
        info.value
    )
    assert "not recorded in the lock" in str(info.value)
    assert read_lock(tmp_path / "sources.lock.json") == {}  # a refused archive is never pinned
    assert (tmp_path / "dl" / f"{ZIP_NAME}.refused").exists()
    assert not (tmp_path / "dl" / ZIP_NAME).exists()
    (server.root / "cut" / ZIP_NAME).write_bytes(whole)  # the server is fixed: a rerun works
    fetch(server, tmp_path, name=f"cut/{ZIP_NAME}")
    assert read_lock(tmp_path / "sources.lock.json")[server.url(f"cut/{ZIP_NAME}")]["size"] == len(
        whole
    )


def test_a_zip_bomb_is_refused_and_never_pinned(server: FileServer, tmp_path: Path) -> None:
    write_zip_bomb(server.root / "bomb" / ZIP_NAME, "CLEVR_v1.0/scenes/CLEVR_val_scenes.json")
    with pytest.raises(SourceError, match="not recorded in the lock") as info:
        fetch(server, tmp_path, name=f"bomb/{ZIP_NAME}")
    assert "would inflate" in str(info.value) and "archives.max_ratio" in str(info.value)
    assert read_lock(tmp_path / "sources.lock.json") == {}
    assert (tmp_path / "dl" / f"{ZIP_NAME}.refused").exists()
    assert not (tmp_path / "data").exists() or not any((tmp_path / "data").rglob("*.json"))


def test_traversal_entry_is_rejected(server: FileServer, tmp_path: Path, sample: Path) -> None:
    build_clevr_zip(
        sample, server.root / "evil" / ZIP_NAME, extra={"CLEVR_v1.0/../../escaped.txt": b"x"}
    )
    with pytest.raises(SourceError, match="refused and not recorded") as info:
        fetch(server, tmp_path, name=f"evil/{ZIP_NAME}")
    assert "`..` component" in str(info.value)
    assert read_lock(tmp_path / "sources.lock.json") == {}
    assert (
        not (tmp_path / "escaped.txt").exists() and not (tmp_path.parent / "escaped.txt").exists()
    )
    assert not (tmp_path / "data" / "CLEVR_v1.0").exists()


def test_zip_without_scenes_is_an_error(server: FileServer, tmp_path: Path) -> None:
    with zipfile.ZipFile(server.root / "other.zip", "w") as archive:
        archive.writestr("something/else.txt", b"x")
    with pytest.raises(SourceError, match="has no CLEVR_v1.0/scenes/CLEVR_train_scenes.json"):
        fetch(server, tmp_path, name="other.zip")


def test_link_local_clevr(tmp_path: Path, sample: Path) -> None:
    link = link_local_clevr(sample, tmp_path / "data")
    assert link == tmp_path / "data" / "CLEVR_v1.0" and link.is_symlink()
    assert len(read_clevr_scenes(link, "train")) == 4
    other = write_sample_clevr(tmp_path / "other", n_train=2, n_val=1, seed=3)
    assert link_local_clevr(other.parent, tmp_path / "data") == link  # parent folder accepted
    assert len(read_clevr_scenes(link, "train")) == 2


def test_link_local_clevr_errors(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="local CLEVR folder not found"):
        link_local_clevr(tmp_path / "nowhere", tmp_path / "data")
    (tmp_path / "half" / "scenes").mkdir(parents=True)
    with pytest.raises(SourceError, match="missing images/") as info:
        link_local_clevr(tmp_path / "half", tmp_path / "data")
    assert str(tmp_path / "half") in str(info.value)


def test_fetch_replaces_a_link_but_not_the_local_copy(
    server: FileServer, tmp_path: Path, sample: Path
) -> None:
    link = link_local_clevr(sample, tmp_path / "data")
    root = fetch(server, tmp_path)
    assert root == link and not root.is_symlink()
    assert not (sample / "LICENSE.txt").exists()  # nothing was extracted into the local copy
    with pytest.raises(SourceError, match="is not a symlink"):
        link_local_clevr(sample, tmp_path / "data")
