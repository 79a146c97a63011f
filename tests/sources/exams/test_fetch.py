"""Fetching the MULTI release from a Hub that answers on 127.0.0.1: download with
huggingface_hub (HF_ENDPOINT respected, resumable), pin, verify, extract."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from archive_bombs import write_zip_bomb
from hub_server import HubServer

from benchsmith.cli import main
from benchsmith.core.errors import SourceError
from benchsmith.sources.exams.fetch import RELEASE_ZIP, REPO, fetch_multi_release
from benchsmith.sources.exams.release import read_release
from benchsmith.sources.exams.release_sample import write_sample_release


def release_zip(tmp_path: Path) -> bytes:
    folder = write_sample_release(tmp_path / "made")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for file in sorted(folder.rglob("*")):
            if file.is_file():
                archive.write(file, f"data/{file.relative_to(folder).as_posix()}")
    return buffer.getvalue()


@pytest.fixture
def hub(tmp_path, monkeypatch):
    with HubServer(tmp_path / "hub") as server:
        server.add(REPO, RELEASE_ZIP, release_zip(tmp_path))
        monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
        monkeypatch.setenv("HF_TOKEN", "hf_secret_token_value")
        monkeypatch.setenv("HF_HUB_OFFLINE", "0")
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf_home"))
        yield server


def test_fetch_pins_and_extracts_the_release(hub, tmp_path):
    lock = tmp_path / "multi.lock.json"
    out = fetch_multi_release(tmp_path / "exams", lock=lock)
    release = read_release(out / "release")
    assert len(release.problems) == 8 and release.has_answers
    pinned = json.loads(lock.read_text())[RELEASE_ZIP]
    assert pinned["commit"] == hub.commit(REPO) and len(pinned["sha256"]) == 64
    assert any(r.authorization == "Bearer hf_secret_token_value" for r in hub.requests)
    assert "hf_secret" not in lock.read_text()
    # every file request is the release's (huggingface_hub may also ask the endpoint's /api/
    # once per process, e.g. /api/agent-harnesses, whichever test comes first)
    files = [r for r in hub.requests if not r.path.startswith("/api/")]
    assert files and all(r.path.startswith(f"/datasets/{REPO}/resolve/") for r in files)


def test_an_interrupted_download_is_taken_up_again(hub, tmp_path):
    hub.cut_after[RELEASE_ZIP] = 3000
    out = fetch_multi_release(tmp_path / "exams", lock=tmp_path / "lock.json")
    cut_and_retried = [r for r in hub.requests if r.method == "GET" and "resolve" in r.path]
    assert len(cut_and_retried) >= 2  # the cut transfer was taken up again by huggingface_hub
    assert len(read_release(out / "release").problems) == 8  # and the zip is whole


def test_a_release_that_changed_is_refused(hub, tmp_path):
    lock = tmp_path / "lock.json"
    fetch_multi_release(tmp_path / "a", lock=lock)
    hub.add(REPO, RELEASE_ZIP, release_zip(tmp_path / "other") + b"changed")
    with pytest.raises(SourceError, match="differs from the copy pinned") as error:
        fetch_multi_release(tmp_path / "b", lock=lock)
    assert str(error.value).count(".refused") >= 1
    assert not (tmp_path / "b" / "release").exists()


@pytest.mark.parametrize("served", ["bomb", "not a release", "not a zip"])
def test_a_download_that_is_not_a_release_is_refused_never_pinned_then_fetched(
    hub, tmp_path, served
):
    bad = tmp_path / "bad.zip"
    if served == "bomb":
        write_zip_bomb(bad, "data/problem_v1.3.1_20251016.json")
    elif served == "not a release":
        with zipfile.ZipFile(bad, "w") as archive:
            archive.writestr("data/readme.txt", "hello")
    else:
        bad.write_text('{"error": "login required"}')
    hub.add(REPO, RELEASE_ZIP, bad.read_bytes())
    lock = tmp_path / "multi.lock.json"
    with pytest.raises(SourceError, match="refused and not recorded in the lock") as error:
        fetch_multi_release(tmp_path / "exams", lock=lock)
    if served == "bomb":
        assert "archives.max_ratio" in str(error.value)
    assert not lock.exists()
    assert (tmp_path / "exams" / "downloads" / f"{RELEASE_ZIP}.refused").is_file()
    assert not (tmp_path / "exams" / "release").exists()
    hub.add(REPO, RELEASE_ZIP, release_zip(tmp_path / "good"))  # the real release is served
    out = fetch_multi_release(tmp_path / "exams", lock=lock)
    assert len(read_release(out / "release").problems) == 8
    assert RELEASE_ZIP in json.loads(lock.read_text())


def test_linking_a_zip_bomb_is_refused_and_writes_nothing(tmp_path):
    from benchsmith.sources.exams.source import link_local_release

    bomb = write_zip_bomb(tmp_path / "MULTI_release.zip", "data/problem_v1.3.1_20251016.json")
    with pytest.raises(SourceError, match="(?s)would inflate.*archives.max_ratio") as error:
        link_local_release(bomb, tmp_path / "exams")
    assert str(bomb) in str(error.value)
    assert not (tmp_path / "exams" / "release").exists()


def test_fetch_from_the_cli_and_a_missing_repository(hub, tmp_path, capsys):
    assert main(["source", "fetch", "exams", "--out", str(tmp_path / "c"),
                 "--lock", str(tmp_path / "l.json")]) == 0  # fmt: skip
    assert read_release(tmp_path / "c" / "release").hard_list
    assert main(["source", "fetch", "exams", "--out", str(tmp_path / "d"), "--repo",
                 "nobody/nothing", "--lock", str(tmp_path / "l.json")]) == 2  # fmt: skip
    err = capsys.readouterr().err
    assert "cannot download" in err and "nobody/nothing" in err and "hf_secret" not in err
