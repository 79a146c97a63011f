"""Push a published folder to a Hub dataset repo and tag the version, with ``huggingface_hub``.

The endpoint is ``HF_ENDPOINT`` (default the Hugging Face Hub) and the token ``HF_TOKEN`` (or the
login ``huggingface_hub`` stored); the token is handed to ``HfApi`` only, never printed, logged
or written, and any error text is scrubbed of it before it is shown. The card's metadata is
checked here (the fields the Hub validates) and by the Hub's ``/api/validate-yaml`` before
anything is uploaded. A version is immutable: when the tag already exists, the folder is compared
with the tagged files (sha256 of LFS files, git blob ids of the rest); the same content is
reported as already pushed, different content is refused. The ``data/`` folder of the branch is
replaced by the pushed one (stale shards of an older version go; they stay under its tag);
nothing else already in the repo is deleted.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError

DEFAULT_ENDPOINT = "https://huggingface.co"
HUB_FIELDS = ("license", "task_categories", "size_categories", "source_datasets", "configs",
              "dataset_info")  # fmt: skip


@dataclass(frozen=True)
class PushResult:
    repo: str
    tag: str
    commit: str | None
    files: int
    bytes: int
    already: bool  # the tag held this content already: nothing was uploaded


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def scrub(text: str) -> str:
    token = os.environ.get("HF_TOKEN")
    return text.replace(token, "***") if token else text


def local_files(folder: Path) -> dict[str, Path]:
    """What a push uploads: every file of the folder but hidden ones (``.cache``, ...)."""
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*"))
            if p.is_file() and not any(part.startswith(".") for part in
                                       p.relative_to(folder).parts)}  # fmt: skip


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def check_card(folder: Path) -> dict[str, Any]:
    """The card's metadata, parsed by ``huggingface_hub``; the Hub's fields must be there."""
    from huggingface_hub import DatasetCard

    readme = folder / "README.md"
    if not readme.is_file():
        raise BenchsmithError("the folder has no dataset card", path=readme,
                              fix="push a folder written by `benchsmith publish`")  # fmt: skip
    data = DatasetCard.load(readme).data.to_dict()
    missing = [k for k in HUB_FIELDS if not data.get(k)]
    if missing:
        raise BenchsmithError(f"the card's metadata lacks {', '.join(missing)}", path=readme,
                              fix="publish the folder again with this benchsmith")  # fmt: skip
    if data["license"] == "other" and not (data.get("license_name") and data.get("license_link")):
        raise BenchsmithError("license 'other' needs license_name and license_link", path=readme,
                              fix="publish the folder again with this benchsmith")  # fmt: skip
    return data


def validate_on_hub(api: Any, folder: Path) -> None:
    """``POST /api/validate-yaml``, as ``DatasetCard.validate`` does, on our endpoint. Errors are
    raised ``from None``: the client's exception may quote request headers."""
    from huggingface_hub.utils import get_session, hf_raise_for_status

    response = get_session().post(
        f"{api.endpoint}/api/validate-yaml",
        json={"repoType": "dataset", "content": (folder / "README.md").read_text("utf-8")},
        headers=api._build_hf_headers(),
    )
    try:
        hf_raise_for_status(response)
    except Exception as exc:
        raise BenchsmithError(f"the Hub rejects the card's metadata: {scrub(str(exc))}",
                              path=folder / "README.md",
                              fix="publish the folder again with this benchsmith") from None  # fmt: skip


def tagged_differences(api: Any, repo: str, tag: str, files: dict[str, Path]) -> list[str]:
    """Paths whose content differs between the folder and the tag (added, changed, gone)."""
    remote = {}
    for entry in api.list_repo_tree(repo, repo_type="dataset", revision=tag, recursive=True):
        if getattr(entry, "lfs", None) is not None:
            remote[entry.path] = ("sha256", entry.lfs.sha256)
        elif hasattr(entry, "blob_id"):
            remote[entry.path] = ("blob", entry.blob_id)
    remote.pop(".gitattributes", None)
    changed = sorted(set(remote) ^ set(files))
    for path in sorted(set(remote) & set(files)):
        kind, value = remote[path]
        data = files[path].read_bytes()
        ours = hashlib.sha256(data).hexdigest() if kind == "sha256" else git_blob_id(data)
        if ours != value:
            changed.append(path)
    return sorted(changed)


def _causes(exc: BaseException) -> str:
    """An exception and what caused it, one line each joined (huggingface_hub wraps an LFS
    upload's HTTP error in a RuntimeError that names only the file): the reason is in the
    cause; a JSON error names what was not JSON."""
    parts, seen = [], exc
    while seen is not None and len(parts) < 3:
        first = (str(seen).strip().splitlines() or [type(seen).__name__])[0]
        if isinstance(seen, ValueError) and type(seen).__name__ == "JSONDecodeError":
            first = f"a reply that is not JSON ({first})"
        parts.append(first)
        seen = seen.__cause__
    return "; ".join(parts)


def push_folder(folder: Path, repo: str, tag: str | None = None, private: bool = False
                ) -> PushResult:  # fmt: skip
    from huggingface_hub import HfApi
    from huggingface_hub.errors import HfHubHTTPError

    from benchsmith.hf.reader import read_build_info

    folder = Path(folder)
    info = read_build_info(folder)
    version = str(info.get("version") or "")
    tag = tag or (f"v{version}" if version else None)
    if not tag:
        raise BenchsmithError("build_info.json has no version to tag",
                              path=folder / "build_info.json", fix="pass --tag vX.Y.Z")  # fmt: skip
    check_card(folder)
    files = local_files(folder)
    api = HfApi(endpoint=endpoint(), token=os.environ.get("HF_TOKEN") or None)
    try:
        validate_on_hub(api, folder)
        api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
        refs = api.list_repo_refs(repo, repo_type="dataset")
        size = sum(p.stat().st_size for p in files.values())
        if any(t.name == tag for t in refs.tags):
            changed = tagged_differences(api, repo, tag, files)
            if changed:
                shown = ", ".join(changed[:5]) + (" ..." if len(changed) > 5 else "")
                raise BenchsmithError(
                    f"{repo} already has {tag} with other content ({len(changed)} file(s) "
                    f"differ: {shown})", path=folder,
                    fix="a version is immutable: publish with a new --version, or push with "
                    "another --tag")  # fmt: skip
            return PushResult(repo, tag, None, len(files), size, already=True)
        commit = api.upload_folder(
            repo_id=repo, repo_type="dataset", folder_path=str(folder),
            commit_message=f"benchsmith {info.get('family', '')} {version}".strip(),
            allow_patterns=list(files), delete_patterns=["data/**"],
        )  # fmt: skip
        api.create_tag(repo, tag=tag, revision=commit.oid, repo_type="dataset",
                       tag_message=f"{info.get('family', '')} {version}")  # fmt: skip
    except HfHubHTTPError as exc:
        raise BenchsmithError(f"the Hub at {api.endpoint} refused: {scrub(str(exc))}", path=folder,
                              fix="check the repo name, your HF_TOKEN's write access and "
                              "HF_ENDPOINT") from None  # fmt: skip
    except (ValueError, RuntimeError, KeyError) as exc:  # JSONDecodeError is a ValueError
        raise BenchsmithError(f"the Hub at {api.endpoint} gave an answer push cannot use: "
                              f"{scrub(_causes(exc))}", path=folder,
                              fix="check HF_ENDPOINT (a Hub, not a proxy or a web page) and the "
                              "Hub's status, then push again (a version already tagged is not "
                              "pushed twice)") from None  # fmt: skip
    except Exception as exc:
        if not isinstance(exc, OSError) and not type(exc).__module__.startswith("httpx"):
            raise  # the HTTP client's transport errors (httpx or httpx2) and OSError only
        raise BenchsmithError(f"cannot reach the Hub at {api.endpoint}: {scrub(str(exc))}",
                              path=folder, fix="check HF_ENDPOINT and the network, then push "
                              "again (a version already tagged is not pushed twice)") from None  # fmt: skip
    return PushResult(repo, tag, commit.oid, len(files), size, already=False)
