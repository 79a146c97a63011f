"""A local stand-in for the Hugging Face Hub's file endpoints (127.0.0.1 only).

It answers what ``huggingface_hub.hf_hub_download`` asks of a file:
``HEAD``/``GET /{datasets|models}/{repo}/resolve/{revision}/{path}`` with ``X-Repo-Commit``,
``ETag`` (the file's sha256, as the Hub gives LFS files), ``Content-Length`` and ``Range``
support, so downloads resume. Files are served from ``root/<repo>/<path>``; the revision must
be ``main`` or the repo's commit id. ``cut_after[path] = N`` drops the first GET of a file after N
bytes. Every request is recorded (method, path, Range, Authorization).

    with HubServer(tmp_path / "hub") as hub:
        hub.add("OpenDFM/MULTI-Benchmark", "release.zip", data)
        hf_hub_download("OpenDFM/MULTI-Benchmark", "release.zip", repo_type="dataset",
                        endpoint=hub.endpoint, local_dir=...)
"""

from __future__ import annotations

import hashlib
import re
import socket
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import unquote, urlsplit

from local_server import LocalServer

RESOLVE = re.compile(r"^/(?:(datasets|spaces)/)?(.+?/[^/]+)/resolve/([^/]+)/(.+)$")


@dataclass(frozen=True)
class HubRequest:
    method: str
    path: str
    range: str | None
    authorization: str | None


class HubServer(LocalServer):
    def __init__(self, root: Path):
        self.root = Path(root)
        self.requests: list[HubRequest] = []
        self.cut_after: dict[str, int] = {}
        self._lock = threading.Lock()
        self._listen(_handler(self))

    def add(self, repo: str, path: str, data: bytes) -> None:
        target = self.root / repo / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def commit(self, repo: str) -> str:
        digest = hashlib.sha1()
        for file in sorted((self.root / repo).rglob("*")):
            if file.is_file():
                digest.update(file.relative_to(self.root / repo).as_posix().encode())
                digest.update(file.read_bytes())
        return digest.hexdigest()


def _handler(hub: HubServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _serve(self, body_wanted: bool) -> None:
            path = unquote(urlsplit(self.path).path)
            with hub._lock:
                hub.requests.append(HubRequest(self.command, path, self.headers.get("Range"),
                                               self.headers.get("Authorization")))  # fmt: skip
            match = RESOLVE.match(path)
            if not match:
                return self._error(404, "EntryNotFound")
            _, repo, revision, name = match.groups()
            file = hub.root / repo / name
            if not (hub.root / repo).is_dir():
                return self._error(404, "RepoNotFound")
            commit = hub.commit(repo)
            if revision not in ("main", commit):
                return self._error(404, "RevisionNotFound")
            if not file.is_file():
                return self._error(404, "EntryNotFound")
            data = file.read_bytes()
            start = 0
            ranged = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range") or "")
            if ranged:
                start = int(ranged[1])
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            else:
                self.send_response(200)
            body = data[start:]
            self.send_header("X-Repo-Commit", commit)
            self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Type", "application/octet-stream")
            self.end_headers()
            if not body_wanted:
                return
            with hub._lock:
                cut = hub.cut_after.pop(name, None) if self.command == "GET" else None
            if cut is None:
                self.wfile.write(body)
                return
            self.wfile.write(body[:cut])
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)

        def _error(self, status: int, code: str) -> None:
            body = f'{{"error": "{code}"}}'.encode()
            self.send_response(status)
            self.send_header("X-Error-Code", code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_HEAD(self) -> None:
            self._serve(body_wanted=False)

        def do_GET(self) -> None:
            self._serve(body_wanted=True)

    return Handler
