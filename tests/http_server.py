"""A tiny local HTTP file server for download tests (127.0.0.1 only, never the network).

Serves files from a folder with ``Range: bytes=N-`` support (206) and, like real servers, an
``ETag`` (from the content) and ``Last-Modified`` (from the mtime) on every response, honouring
``If-Range`` (a validator that no longer matches gets the whole file, 200). It can misbehave on
request: cut a transfer after N bytes, ignore ``Range``, send no validators, or answer a fixed
error status.
Every request is recorded so tests can assert what was (not) downloaded.

    with FileServer(tmp_path / "srv") as server:
        server.cut_after["big.bin"] = 5000   # first GET of big.bin stops after 5000 bytes
        download_file(server.url("big.bin"), dest)
        assert server.requests[1].range == "bytes=5000-"
"""

from __future__ import annotations

import hashlib
import re
import socket
import threading
from dataclasses import dataclass
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import unquote, urlsplit

from local_server import LocalServer


@dataclass(frozen=True)
class Request:
    name: str  # the requested file name, relative to the served folder
    range: str | None  # the Range header, if any
    if_range: str | None = None  # the If-Range header, if any


class FileServer(LocalServer):
    """Threaded ``http.server`` on an ephemeral port; use as a context manager."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.requests: list[Request] = []
        self.cut_after: dict[str, int] = {}  # name -> bytes sent before cutting (once)
        self.status: dict[str, int] = {}  # name -> error status to answer every time
        self.ignore_range = False  # answer 200 with the whole file even when asked for a range
        self.validators = True  # send ETag and Last-Modified (False: a server without them)
        self.honour_if_range = True  # False: a broken server that resumes whatever changed
        self._lock = threading.Lock()
        self._listen(_handler_for(self))

    def url(self, name: str) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/{name}"

    def requests_for(self, name: str) -> list[Request]:
        return [request for request in self.requests if request.name == name]


def _handler_for(server: FileServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:  # keep test output quiet
            pass

        def do_GET(self) -> None:
            name = unquote(urlsplit(self.path).path).lstrip("/")
            requested_range = self.headers.get("Range")
            if_range = self.headers.get("If-Range")
            with server._lock:
                server.requests.append(Request(name, requested_range, if_range))
                cut = server.cut_after.pop(name, None)
            if name in server.status:
                self.send_error(server.status[name])
                return
            path = server.root / name
            if not path.is_file():
                self.send_error(404)
                return
            data = path.read_bytes()
            etag = f'"{hashlib.sha256(data).hexdigest()[:16]}"'
            modified = formatdate(path.stat().st_mtime, usegmt=True)
            start = _range_start(requested_range)
            if server.honour_if_range and if_range is not None and if_range not in (etag, modified):
                start = None  # RFC 9110: a failed If-Range means "send the whole file"
            if start is None or server.ignore_range:
                self.send_response(200)
                body = data
            elif start >= len(data):
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{len(data)}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            else:
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
                body = data[start:]
            if server.validators:
                self.send_header("ETag", etag)
                self.send_header("Last-Modified", modified)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Accept-Ranges", "bytes")
            self.end_headers()
            if cut is None:
                self.wfile.write(body)
                return
            self.wfile.write(body[:cut])  # then drop the connection mid-body
            self.wfile.flush()
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)

    return Handler


def _range_start(header: str | None) -> int | None:
    match = re.fullmatch(r"bytes=(\d+)-", header or "")
    return int(match[1]) if match else None
