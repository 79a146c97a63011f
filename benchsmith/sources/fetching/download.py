"""Resumable, verified HTTP downloads using only the standard library.

COCO's ``val2014.zip`` is about 6 GB: a dropped connection must not cost the bytes already on
disk, and a corrupt or changed file must never appear under its final name. So bytes go to
``NAME.part``, a retry resumes it with a ``Range`` request, and ``NAME`` appears (``os.replace``)
only once its size and sha256 match the expected values.

A resume must never splice two versions of a file. The first response's validator (its strong
``ETag``, else its ``Last-Modified``) is kept next to the part file (``NAME.part.json``) and
every resume sends it as ``If-Range``: a server whose file changed answers with the whole new
file (200), and the download starts over. A part with no recorded validator is resumed only
when the expected sha256 is known (the result is checked anyway); otherwise it starts over.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from benchsmith import __version__
from benchsmith.core.atomic import atomic_write_json
from benchsmith.core.errors import SourceError
from benchsmith.core.hashing import sha256_file
from benchsmith.core.progress import Bar, log, progress_bar

CHUNK = 1 << 20
RETRY_BACKOFF_S = 1.0  # first pause before a retry; doubles each time (tests set it to 0)
MAX_BACKOFF_S = 30.0
USER_AGENT = f"benchsmith/{__version__}"
RETRYABLE_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
_CONTENT_RANGE = re.compile(r"bytes\s+(\d+)-(\d+)/(\d+|\*)")
_TRANSIENT = (http.client.HTTPException, ConnectionError, TimeoutError, urllib.error.URLError)


class ChecksumMismatch(SourceError):
    """The bytes on disk are not the expected ones (corrupt transfer or a changed upstream file)."""


class _Interrupted(Exception):
    """The transfer stopped early; what reached the ``.part`` file is kept for the next attempt."""


def download_file(
    url: str,
    dest: Path,
    *,
    expected_sha256: str | None = None,
    expected_size: int | None = None,
    desc: str | None = None,
    timeout: float = 60,
    retries: int = 3,
) -> Path:
    """Download ``url`` to ``dest``, resuming a previous ``.part`` and verifying the result.

    An existing ``dest`` is verified and returned without touching the network. ``retries``
    counts consecutive attempts that made no progress, so a flaky link that keeps delivering
    bytes is never given up on.
    """
    dest = Path(dest)
    if dest.exists():
        _verify(dest, expected_size, expected_sha256)
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    if _size(part) and not _resumable(part, url, expected_sha256):
        log(f"{part.name}: no validator recorded for this partial download; starting over")
        _discard(part)
    with progress_bar(
        total=expected_size, desc=desc or dest.name, unit="B", unit_scale=True
    ) as bar:
        _download_with_retries(url, part, bar, timeout=timeout, retries=retries)
    _verify(part, expected_size, expected_sha256)
    os.replace(part, dest)
    _validator_path(part).unlink(missing_ok=True)
    return dest


def _validator_path(part: Path) -> Path:
    return part.with_name(part.name + ".json")


def _read_validator(part: Path, url: str) -> dict[str, str]:
    """The validator recorded when ``part`` was started from ``url`` ({} when none or stale)."""
    try:
        data = json.loads(_validator_path(part).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("url") != url:
        return {}
    return {k: v for k, v in data.items() if k in ("etag", "last_modified") and v}


def _resumable(part: Path, url: str, expected_sha256: str | None) -> bool:
    return bool(_read_validator(part, url)) or expected_sha256 is not None


def _discard(part: Path) -> None:
    part.unlink(missing_ok=True)
    _validator_path(part).unlink(missing_ok=True)


def _if_range(validator: dict[str, str]) -> str | None:
    """The ``If-Range`` value: a strong ETag, else Last-Modified (a weak ETag is not allowed)."""
    etag = validator.get("etag", "")
    if etag and not etag.startswith("W/"):
        return etag
    return validator.get("last_modified")


def _record_validator(part: Path, url: str, headers: Any) -> None:
    atomic_write_json(
        _validator_path(part),
        {"url": url, "etag": headers.get("ETag"), "last_modified": headers.get("Last-Modified")},
    )


def _verify(path: Path, size: int | None, sha256: str | None) -> None:
    """Raise :class:`ChecksumMismatch` unless ``path`` has the expected size and sha256."""
    fix = f"delete {path} and rerun; if the file changed upstream on purpose, update its lock entry"
    actual_size = path.stat().st_size
    if size is not None and actual_size != size:
        raise ChecksumMismatch(
            f"checksum mismatch: {path.name} has {actual_size} bytes, expected {size}",
            path=path,
            fix=fix,
        )
    if sha256 is not None:
        actual = sha256_file(path)
        if actual != sha256.lower():
            raise ChecksumMismatch(
                f"sha256 checksum mismatch for {path.name}: got {actual}, expected {sha256}",
                path=path,
                fix=fix,
            )


def _download_with_retries(url: str, part: Path, bar: Bar, *, timeout: float, retries: int) -> None:
    failures = 0
    while True:
        before = _size(part)
        try:
            _attempt(url, part, bar, timeout)
            return
        except urllib.error.HTTPError as exc:  # before URLError: HTTPError is a subclass
            exc.close()
            if exc.code not in RETRYABLE_STATUS:
                raise SourceError(
                    f"download failed: HTTP {exc.code} {exc.reason} for {url}",
                    path=part,
                    fix="check that the URL is correct and reachable (e.g. `curl -I URL`)",
                ) from exc
            error: BaseException = exc
        except (_Interrupted, *_TRANSIENT) as exc:
            error = exc
        failures = 1 if _size(part) > before else failures + 1
        if failures > retries:
            raise SourceError(
                f"download of {url} failed after {retries} retries: {error}",
                path=part,
                fix="check the network and rerun; the bytes already downloaded are resumed",
            ) from error
        delay = min(RETRY_BACKOFF_S * 2 ** (failures - 1), MAX_BACKOFF_S)
        log(f"download of {url} interrupted ({error}); retrying in {delay:.0f}s")
        time.sleep(delay)


def _attempt(url: str, part: Path, bar: Bar, timeout: float) -> None:
    """One request: resume ``part`` from its current size, or restart it if the server won't."""
    have = _size(part)
    headers = {"User-Agent": USER_AGENT}
    validator = _read_validator(part, url) if have else {}
    if have:
        headers["Range"] = f"bytes={have}-"
        if (if_range := _if_range(validator)) is not None:
            headers["If-Range"] = if_range
    try:
        response = urllib.request.urlopen(
            urllib.request.Request(url, headers=headers), timeout=timeout
        )
    except urllib.error.HTTPError as exc:
        if exc.code != 416 or not have:
            raise
        _, _, total = _parse_content_range(exc.headers.get("Content-Range", ""))
        exc.close()
        if total == have:  # the previous run got every byte but stopped before the rename
            return
        _discard(part)
        raise _Interrupted("server refused the resume range; restarting from zero") from exc
    with response:
        if response.status == 206:
            start, _, total = _parse_content_range(response.headers.get("Content-Range", ""))
            if start != have:
                _discard(part)
                raise _Interrupted(f"server resumed at byte {start}, not {have}; restarting")
            etag = response.headers.get("ETag")
            if validator.get("etag") and etag and etag != validator["etag"]:
                _discard(part)  # a server that ignored If-Range: the file changed underneath
                raise _Interrupted("the file changed on the server since the transfer began")
            mode = "ab"
        else:  # 200: a changed file (If-Range), Range ignored, or a first request: start over
            if have:
                log(f"{part.name}: the server sent the whole file; restarting from byte 0")
            have, mode = 0, "wb"
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            _record_validator(part, url, response.headers)
        bar.reset(total=total)
        bar.update(have)
        with open(part, mode) as handle:
            while chunk := response.read(CHUNK):
                handle.write(chunk)
                bar.update(len(chunk))
    got = _size(part)
    if total is not None and got < total:
        raise _Interrupted(f"connection closed after {got} of {total} bytes")


def _parse_content_range(value: str) -> tuple[int | None, int | None, int | None]:
    """``bytes START-END/TOTAL`` (or ``bytes */TOTAL``) -> (start, end, total); None if absent."""
    match = _CONTENT_RANGE.fullmatch(value.strip())
    if match:
        total = None if match[3] == "*" else int(match[3])
        return int(match[1]), int(match[2]), total
    unsatisfied = re.fullmatch(r"bytes\s+\*/(\d+)", value.strip())
    return None, None, int(unsatisfied[1]) if unsatisfied else None


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0
