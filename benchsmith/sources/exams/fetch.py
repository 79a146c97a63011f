"""Fetch the official MULTI release from its Hugging Face dataset repository.

The release is one zip in ``OpenDFM/MULTI-Benchmark`` (``MULTI_v1.3.1_20251016_release.zip``).
It is downloaded with ``huggingface_hub`` (a transfer cut short is taken up again, and a
partial file left by a killed run is continued by the next), from ``$HF_ENDPOINT`` when set (a mirror, or a local server in the tests) with
``$HF_TOKEN`` when set (never written anywhere by benchsmith), at a pinned revision when given.
The first download records the zip's size, sha256 and the repository commit in a lock file
(``multi.lock.json``; commit it); a later download must match it or is refused, naming the
file. A first download is pinned only once it reads as a release: a zip that opens, within the
``archives:`` bounds, holding a ``problem_v*.json``; one that does not is moved aside to
``NAME.refused`` and never pinned, so the next fetch downloads afresh. The zip is then
extracted with path checks into ``OUT/release``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from benchsmith.core.atomic import atomic_write_text
from benchsmith.core.errors import SourceError
from benchsmith.core.hashing import sha256_file

REPO = "OpenDFM/MULTI-Benchmark"
RELEASE_ZIP = "MULTI_v1.3.1_20251016_release.zip"
DEFAULT_LOCK = Path("multi.lock.json")
DEFAULT_ENDPOINT = "https://huggingface.co"


def endpoint() -> str:
    return os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT


def download_release(
    download_dir: Path, repo: str = REPO, filename: str = RELEASE_ZIP, revision: str | None = None
) -> tuple[Path, str]:
    """(the zip on disk, the repository commit it came from)."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError

    try:
        path = hf_hub_download(repo, filename, repo_type="dataset", revision=revision,
                               endpoint=endpoint(), local_dir=download_dir)  # fmt: skip
    except (HfHubHTTPError, LocalEntryNotFoundError, OSError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SourceError(
            f"cannot download {filename} from {repo} at {endpoint()} ({message})",
            fix="check the network, HF_ENDPOINT and HF_TOKEN, or link a local copy: "
            "benchsmith source link exams ZIP --out DIR",
        ) from exc
    from huggingface_hub import get_hf_file_metadata, hf_hub_url

    url = hf_hub_url(repo, filename, repo_type="dataset", revision=revision, endpoint=endpoint())
    commit = get_hf_file_metadata(url).commit_hash or ""
    return Path(path), commit


def check_release_zip(zip_path: Path) -> None:
    """The download reads as a MULTI release (a sound zip within the archive bounds, with a
    ``problem_v*.json`` member), or is moved aside to ``NAME.refused`` with an error."""
    import zipfile
    from pathlib import PurePosixPath

    from benchsmith.sources.fetching.archive import check_zip

    refused = zip_path.with_name(zip_path.name + ".refused")
    try:
        check_zip(zip_path, corrupt_fix="fetch it again")
        with zipfile.ZipFile(zip_path) as archive:
            names = [PurePosixPath(i.filename).name for i in archive.infolist()]
        if not any(n.startswith("problem_v") and n.endswith(".json") for n in names):
            raise SourceError("the zip holds no problem_v*.json", path=zip_path)
    except SourceError as exc:
        zip_path.replace(refused)
        raise SourceError(
            f"{zip_path.name} was refused and not recorded in the lock: {str(exc).splitlines()[0]}",
            path=refused,
            fix="check the repository and file name (it must be the MULTI release zip) and "
            f"fetch again; the refused file was kept as {refused.name} for inspection"
            + (f" ({exc.fix})" if exc.fix and "archives." in exc.fix else ""),
        ) from exc


def check_lock(zip_path: Path, commit: str, lock_path: Path) -> dict[str, str]:
    """Pin the zip on first download; refuse one that differs from the pin afterwards."""
    entry = {"size": str(zip_path.stat().st_size), "sha256": sha256_file(zip_path),
             "commit": commit}  # fmt: skip
    lock = json.loads(lock_path.read_text(encoding="utf-8")) if lock_path.is_file() else {}
    pinned = lock.get(zip_path.name)
    if pinned and (pinned["sha256"], pinned["size"]) != (entry["sha256"], entry["size"]):
        refused = zip_path.with_name(zip_path.name + ".refused")
        zip_path.replace(refused)
        raise SourceError(
            f"{zip_path.name} differs from the copy pinned in {lock_path.name} (sha256 "
            f"{entry['sha256'][:12]} != {pinned['sha256'][:12]})",
            path=refused,
            fix=f"if the release really changed, clear its pin (`benchsmith source unpin exams "
            f"{zip_path.name} --lock {lock_path}`) and fetch again",
        )
    if not pinned:
        lock[zip_path.name] = entry
        atomic_write_text(lock_path, json.dumps(lock, indent=2, sort_keys=True) + "\n")
    return entry


def fetch_multi_release(
    out: str | Path,
    *,
    repo: str = REPO,
    filename: str = RELEASE_ZIP,
    revision: str | None = None,
    lock: str | Path = DEFAULT_LOCK,
    download_dir: str | Path | None = None,
) -> Path:
    from benchsmith.sources.exams.source import link_local_release

    out = Path(out)
    downloads = Path(download_dir) if download_dir else out / "downloads"
    zip_path, commit = download_release(downloads, repo, filename, revision)
    pinned = Path(lock).is_file() and zip_path.name in json.loads(Path(lock).read_text("utf-8"))
    if not pinned:  # a pinned one is held to its checksum instead
        check_release_zip(zip_path)
    check_lock(zip_path, commit, Path(lock))
    link_local_release(zip_path, out)
    return out  # the exams folder; the release is in OUT/release
