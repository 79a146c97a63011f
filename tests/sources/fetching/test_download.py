"""download_file against a local server: resume, restart, verify, retry and fail clearly."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from http_server import FileServer

from benchsmith.core.errors import SourceError
from benchsmith.sources.fetching import download
from benchsmith.sources.fetching.download import download_file

PAYLOAD = os.urandom(64 * 1024 + 123)
SHA = hashlib.sha256(PAYLOAD).hexdigest()


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(download, "RETRY_BACKOFF_S", 0.0)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[FileServer]:
    with FileServer(tmp_path / "srv") as srv:
        (srv.root / "blob.bin").write_bytes(PAYLOAD)
        yield srv


def fetch(server: FileServer, dest: Path, **kwargs: object) -> Path:
    return download_file(server.url("blob.bin"), dest, timeout=5, **kwargs)


def test_downloads_and_verifies(server: FileServer, tmp_path: Path) -> None:
    dest = tmp_path / "dl" / "blob.bin"
    assert fetch(server, dest, expected_sha256=SHA, expected_size=len(PAYLOAD)) == dest
    assert dest.read_bytes() == PAYLOAD
    assert not dest.with_name("blob.bin.part").exists()
    assert [r.range for r in server.requests] == [None]


def test_interrupted_transfer_resumes_with_range(server: FileServer, tmp_path: Path) -> None:
    server.cut_after["blob.bin"] = 5000
    dest = tmp_path / "blob.bin"
    fetch(server, dest, expected_sha256=SHA)
    assert dest.read_bytes() == PAYLOAD
    assert [r.range for r in server.requests] == [None, "bytes=5000-"]


def test_existing_part_is_resumed(server: FileServer, tmp_path: Path) -> None:
    dest = tmp_path / "blob.bin"
    dest.with_name("blob.bin.part").write_bytes(PAYLOAD[:1000])
    fetch(server, dest, expected_sha256=SHA)
    assert dest.read_bytes() == PAYLOAD
    assert [r.range for r in server.requests] == ["bytes=1000-"]


def test_server_ignoring_range_restarts_from_zero(server: FileServer, tmp_path: Path) -> None:
    server.ignore_range = True
    dest = tmp_path / "blob.bin"
    dest.with_name("blob.bin.part").write_bytes(b"garbage that must not survive")
    fetch(server, dest, expected_sha256=SHA)
    assert dest.read_bytes() == PAYLOAD


def test_complete_part_answered_416_is_finished(server: FileServer, tmp_path: Path) -> None:
    dest = tmp_path / "blob.bin"
    dest.with_name("blob.bin.part").write_bytes(PAYLOAD)
    fetch(server, dest, expected_sha256=SHA)
    assert dest.read_bytes() == PAYLOAD
    assert [r.range for r in server.requests] == [f"bytes={len(PAYLOAD)}-"]


def test_existing_verified_file_makes_no_request(server: FileServer, tmp_path: Path) -> None:
    dest = tmp_path / "blob.bin"
    dest.write_bytes(PAYLOAD)
    fetch(server, dest, expected_sha256=SHA, expected_size=len(PAYLOAD))
    assert server.requests == []


def test_checksum_mismatch_keeps_final_name_free(server: FileServer, tmp_path: Path) -> None:
    dest = tmp_path / "blob.bin"
    with pytest.raises(SourceError, match="checksum") as info:
        fetch(server, dest, expected_sha256="0" * 64)
    assert "delete" in str(info.value) and "blob.bin" in str(info.value)
    assert not dest.exists()


def test_size_mismatch_is_reported(server: FileServer, tmp_path: Path) -> None:
    dest = tmp_path / "blob.bin"
    with pytest.raises(SourceError, match="checksum mismatch: blob.bin.part has"):
        fetch(server, dest, expected_size=len(PAYLOAD) + 1)
    assert not dest.exists()


def test_existing_file_that_fails_verification_is_an_error(
    server: FileServer, tmp_path: Path
) -> None:
    dest = tmp_path / "blob.bin"
    dest.write_bytes(b"not it")
    with pytest.raises(SourceError, match="checksum"):
        fetch(server, dest, expected_sha256=SHA)
    assert server.requests == []


def test_404_names_the_url_without_retrying(server: FileServer, tmp_path: Path) -> None:
    url = server.url("missing.zip")
    with pytest.raises(SourceError, match="HTTP 404") as info:
        download_file(url, tmp_path / "missing.zip", timeout=5)
    assert url in str(info.value)
    assert len(server.requests) == 1


def test_500_is_retried_then_names_the_url(server: FileServer, tmp_path: Path) -> None:
    server.status["blob.bin"] = 500
    with pytest.raises(SourceError, match="failed after 2 retries") as info:
        fetch(server, tmp_path / "blob.bin", retries=2)
    assert server.url("blob.bin") in str(info.value)
    assert len(server.requests) == 3
    assert not (tmp_path / "blob.bin").exists()


def test_unreachable_server_is_a_source_error(tmp_path: Path) -> None:
    with FileServer(tmp_path / "srv") as srv:
        url = srv.url("blob.bin")
    with pytest.raises(SourceError, match="failed after 1 retries") as info:
        download_file(url, tmp_path / "blob.bin", timeout=2, retries=1)
    assert url in str(info.value)


def interrupted_run(server: FileServer, dest: Path) -> None:
    """A first run that dies mid-transfer, leaving ``NAME.part`` and its validator behind."""
    server.cut_after["blob.bin"] = 5000
    with pytest.raises(SourceError, match="failed after 0 retries"):
        fetch(server, dest, retries=0)
    assert dest.with_name("blob.bin.part").stat().st_size == 5000


def test_resume_sends_if_range_with_the_first_responses_etag(
    server: FileServer, tmp_path: Path
) -> None:
    dest = tmp_path / "blob.bin"
    interrupted_run(server, dest)
    fetch(server, dest)
    first, resumed = server.requests
    assert first.if_range is None and resumed.range == "bytes=5000-"
    assert resumed.if_range and resumed.if_range.startswith('"')  # the strong ETag
    assert dest.read_bytes() == PAYLOAD
    assert not dest.with_name("blob.bin.part.json").exists()  # cleaned up with the part


def test_a_file_changed_between_interruption_and_resume_is_not_spliced(
    server: FileServer, tmp_path: Path
) -> None:
    dest = tmp_path / "blob.bin"
    interrupted_run(server, dest)
    changed = os.urandom(len(PAYLOAD))
    (server.root / "blob.bin").write_bytes(changed)
    fetch(server, dest)
    assert dest.read_bytes() == changed  # the whole new file, never old head + new tail


def test_a_server_ignoring_if_range_is_caught_by_its_changed_etag(
    server: FileServer, tmp_path: Path
) -> None:
    dest = tmp_path / "blob.bin"
    interrupted_run(server, dest)
    changed = os.urandom(len(PAYLOAD))
    (server.root / "blob.bin").write_bytes(changed)
    server.honour_if_range = False
    fetch(server, dest)
    assert dest.read_bytes() == changed
    assert [r.range for r in server.requests] == [None, "bytes=5000-", None]


def test_without_a_validator_an_unpinned_part_starts_over(
    server: FileServer, tmp_path: Path
) -> None:
    server.validators = False
    dest = tmp_path / "blob.bin"
    interrupted_run(server, dest)
    (server.root / "blob.bin").write_bytes(PAYLOAD[::-1])
    fetch(server, dest)
    assert dest.read_bytes() == PAYLOAD[::-1]
    assert [r.range for r in server.requests] == [None, None]
