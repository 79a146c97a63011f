"""A local stand-in for the part of the Hugging Face Hub API that a push and a download use.

127.0.0.1 only, in memory. It speaks what ``huggingface_hub`` sends for ``create_repo``,
``POST /api/validate-yaml`` (the card metadata rules we rely on), ``upload_folder`` (preupload,
the LFS batch API with basic transfers, the NDJSON commit with regular, LFS and deleted-folder
operations), ``list_repo_refs``, ``create_tag``, ``list_repo_tree`` and what
``snapshot_download`` reads (``repo_info`` at a revision, the tree, ``resolve`` with
``X-Repo-Commit``/``ETag``). Commits are content-addressed; branches and tags point at them.
Every request is recorded with its ``Authorization`` header. ``.parquet`` files and files over
10 MB are LFS, as a new dataset repo's ``.gitattributes`` makes them.

The client's Xet path needs a Xet storage service this server does not emulate, so tests set
``HF_HUB_DISABLE_XET=1`` and the client uses the LFS protocol, which the Hub still accepts.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, unquote, urlsplit

import yaml
from local_server import LocalServer

GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"
LFS_LIMIT = 10 * 1024 * 1024
SIZE_CATEGORIES = {"n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "10M<n<100M",
                   "100M<n<1B", "1B<n<10B", "10B<n<100B", "100B<n<1T", "n>1T"}  # fmt: skip
API = re.compile(r"^/api/datasets/(?P<repo>[^/]+/[^/]+)/(?P<verb>preupload|commit|tag|tree|"
                 r"revision|refs)(?:/(?P<rev>[^/]+))?(?P<rest>/.*)?$")  # fmt: skip
RESOLVE = re.compile(r"^/datasets/(?P<repo>[^/]+/[^/]+)/resolve/(?P<rev>[^/]+)/(?P<path>.+)$")
LFS_BATCH = re.compile(r"^/datasets/(?P<repo>[^/]+/[^/]+)\.git/info/lfs/objects/batch$")


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def is_lfs(path: str, size: int) -> bool:
    return path.endswith(".parquet") or size > LFS_LIMIT


@dataclass
class Repo:
    private: bool
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)

    def resolve(self, revision: str) -> str | None:
        revision = unquote(revision)
        return self.branches.get(revision) or self.tags.get(revision) or (
            revision if revision in self.commits else None)  # fmt: skip

    def add_commit(self, files: dict[str, bytes], parent: str | None) -> str:
        digest = hashlib.sha1((parent or "").encode())
        for path in sorted(files):
            digest.update(path.encode() + b"\0" + hashlib.sha256(files[path]).digest())
        oid = digest.hexdigest()
        self.commits[oid] = dict(files)
        return oid


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    authorization: str | None


class HubApiServer(LocalServer):
    def __init__(self) -> None:
        self.repos: dict[str, Repo] = {}
        self.lfs: dict[str, bytes] = {}
        self.requests: list[Seen] = []
        self.lock = threading.Lock()
        # faults a test turns on: LFS uploads answered 507 by the storage; POSTs to these
        # paths answered 200 with an HTML page (a proxy's or a maintenance page)
        self.lfs_storage_full = False
        self.html_for: set[str] = set()
        self._listen(_handler(self))

    def files(self, repo: str, revision: str = "main") -> dict[str, bytes]:
        state = self.repos[repo]
        return state.commits[state.resolve(revision)]


def validate_card(content: str) -> list[str]:
    """The metadata rules a push relies on the Hub to hold (a subset of the Hub's schema)."""
    match = re.match(r"^---\n(.*?)\n---\n", content, re.S)
    if not match:
        return ["no YAML metadata block"]
    meta = yaml.safe_load(match[1]) or {}
    errors = [f'"{k}" is required' for k in ("license", "task_categories", "size_categories",
                                              "source_datasets", "configs", "dataset_info")
              if not meta.get(k)]  # fmt: skip
    if meta.get("license") == "other" and not meta.get("license_name"):
        errors.append('"license_name" is required when "license" is "other"')
    errors += [f'"size_categories" {v!r} is not a size category'
               for v in meta.get("size_categories") or [] if v not in SIZE_CATEGORIES]  # fmt: skip
    for config in meta.get("configs") or []:
        if (
            not isinstance(config, dict)
            or "config_name" not in config
            or "data_files" not in config
        ):
            errors.append(f'"configs" entry {config!r} needs config_name and data_files')
    names = {c.get("config_name") for c in meta.get("configs") or [] if isinstance(c, dict)}
    for info in meta.get("dataset_info") or []:
        if info.get("config_name") not in names or not info.get("features"):
            errors.append(
                f'"dataset_info" entry {info.get("config_name")!r} does not match a config'
            )
    return errors


def _handler(hub: HubApiServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        # --- plumbing ------------------------------------------------------------------
        def _record(self) -> tuple[str, dict]:
            parts = urlsplit(self.path)
            with hub.lock:
                hub.requests.append(Seen(self.command, parts.path,
                                         self.headers.get("Authorization")))  # fmt: skip
            return unquote(parts.path), parse_qs(parts.query)

        def _body(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def _send(self, status: int, body: bytes = b"", headers: dict | None = None,
                  content_type: str = "application/json") -> None:  # fmt: skip
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _json(self, value: object, status: int = 200) -> None:
            self._send(status, json.dumps(value).encode())

        def _error(self, status: int, message: str, code: str | None = None) -> None:
            self._send(status, json.dumps({"error": message}).encode(),
                       {"X-Error-Code": code} if code else {"X-Error-Message": message})  # fmt: skip

        # --- verbs ---------------------------------------------------------------------
        def do_POST(self) -> None:
            path, _ = self._record()
            body = self._body()
            if path in hub.html_for:
                return self._send(200, b"<html><body>Down for maintenance</body></html>",
                                  content_type="text/html")  # fmt: skip
            if path == "/api/repos/create":
                return self._create(json.loads(body))
            if path == "/api/validate-yaml":
                errors = validate_card(json.loads(body)["content"])
                return self._error(400, "; ".join(errors)) if errors else self._json(
                    {"errors": [], "warnings": []})  # fmt: skip
            if match := LFS_BATCH.match(path):
                return self._lfs_batch(json.loads(body))
            match = API.match(path)
            if not match or match["repo"] not in hub.repos:
                return self._error(404, "Repository not found", "RepoNotFound")
            repo = hub.repos[match["repo"]]
            if match["verb"] == "preupload":
                return self._preupload(repo, match["rev"], json.loads(body))
            if match["verb"] == "commit":
                return self._commit(match["repo"], repo, match["rev"], body)
            if match["verb"] == "tag":
                return self._tag(repo, match["rev"], json.loads(body))
            return self._error(404, "not found")

        def do_PUT(self) -> None:
            path, _ = self._record()
            data = self._body()
            oid = path.removeprefix("/lfs-upload/")
            if hub.lfs_storage_full:
                return self._send(507, b"Insufficient Storage", content_type="text/plain")
            if hashlib.sha256(data).hexdigest() != oid:
                return self._error(400, "sha256 mismatch")
            with hub.lock:
                hub.lfs[oid] = data
            self._send(200)

        def do_GET(self) -> None:
            self._read(body=True)

        def do_HEAD(self) -> None:
            self._read(body=False)

        # --- handlers ------------------------------------------------------------------
        def _create(self, request: dict) -> None:
            name = "/".join(p for p in (request.get("organization"), request["name"]) if p)
            if request.get("type") != "dataset":
                return self._error(400, "only dataset repos here")
            with hub.lock:
                if name in hub.repos:  # the Hub's 409 names the repo's url, which the client reads
                    return self._send(
                        409,
                        json.dumps(
                            {
                                "error": "You already created this dataset repo",
                                "url": f"{hub.endpoint}/datasets/{name}",
                            }
                        ).encode(),
                    )
                repo = hub.repos[name] = Repo(private=bool(request.get("private")))
                repo.branches["main"] = repo.add_commit({".gitattributes": GITATTRIBUTES}, None)
            self._json({"url": f"{hub.endpoint}/datasets/{name}", "name": name})

        def _preupload(self, repo: Repo, revision: str, request: dict) -> None:
            current = repo.commits[repo.resolve(revision)]
            files = []
            for item in request["files"]:
                existing = current.get(item["path"])
                files.append({"path": item["path"], "shouldIgnore": False,
                              "uploadMode": "lfs" if is_lfs(item["path"], item["size"])
                              else "regular",
                              "oid": blob_id(existing) if existing is not None else None})  # fmt: skip
            self._json({"files": files, "commitOid": repo.resolve(revision)})

        def _lfs_batch(self, request: dict) -> None:
            objects = []
            for item in request["objects"]:
                entry = {"oid": item["oid"], "size": item["size"]}
                if item["oid"] not in hub.lfs:
                    entry["actions"] = {"upload": {"href": f"{hub.endpoint}/lfs-upload/"
                                                           f"{item['oid']}"}}  # fmt: skip
                objects.append(entry)
            self._send(200, json.dumps({"transfer": "basic", "objects": objects}).encode(),
                       content_type="application/vnd.git-lfs+json")  # fmt: skip

        def _commit(self, name: str, repo: Repo, revision: str, body: bytes) -> None:
            lines = [json.loads(line) for line in body.splitlines() if line.strip()]
            parent = repo.resolve(revision)
            files = dict(repo.commits[parent])
            for line in lines:
                value = line["value"]
                if line["key"] == "file":
                    files[value["path"]] = base64.b64decode(value["content"])
                elif line["key"] == "lfsFile":
                    if value["oid"] not in hub.lfs:
                        return self._error(400, f"LFS object {value['oid']} was never uploaded")
                    files[value["path"]] = hub.lfs[value["oid"]]
                elif line["key"] == "deletedFile":
                    files.pop(value["path"], None)
                elif line["key"] == "deletedFolder":
                    prefix = value["path"].rstrip("/") + "/"
                    files = {p: d for p, d in files.items() if not p.startswith(prefix)}
            with hub.lock:
                oid = repo.add_commit(files, parent)
                repo.branches[unquote(revision)] = oid
            self._json({"commitUrl": f"{hub.endpoint}/datasets/{name}/commit/{oid}",
                        "commitOid": oid, "success": True})  # fmt: skip

        def _tag(self, repo: Repo, revision: str, request: dict) -> None:
            commit = repo.resolve(revision)
            with hub.lock:
                if request["tag"] in repo.tags:
                    return self._error(409, f"Tag {request['tag']} already exists")
                repo.tags[request["tag"]] = commit
            self._json({"name": request["tag"]})

        def _read(self, body: bool) -> None:
            path, query = self._record()
            if match := RESOLVE.match(path):
                return self._resolve(match, body)
            match = API.match(path)
            if not match or match["repo"] not in hub.repos:
                return self._error(404, "Repository not found", "RepoNotFound")
            repo = hub.repos[match["repo"]]
            if match["verb"] == "refs":

                def ref(kind: str, name: str, oid: str) -> dict:
                    return {"name": name, "ref": f"refs/{kind}/{name}", "targetCommit": oid}

                return self._json({"branches": [ref("heads", n, o) for n, o in repo.branches.items()],
                                   "tags": [ref("tags", n, o) for n, o in repo.tags.items()],
                                   "converts": []})  # fmt: skip
            commit = repo.resolve(match["rev"] or "main")
            if commit is None:
                return self._error(404, "Revision not found", "RevisionNotFound")
            files = repo.commits[commit]
            if match["verb"] == "revision":
                return self._json({"id": match["repo"], "sha": commit, "private": repo.private,
                                   "siblings": [{"rfilename": p} for p in sorted(files)]})  # fmt: skip
            if match["verb"] == "tree":
                return self._tree(files, (match["rest"] or "").strip("/"), query)
            return self._error(404, "not found")

        def _tree(self, files: dict[str, bytes], under: str, query: dict) -> None:
            recursive = query.get("recursive", ["false"])[0].lower() in ("1", "true")
            prefix = f"{under}/" if under else ""
            entries, folders = [], set()
            for path in sorted(p for p in files if p.startswith(prefix)):
                rest = path[len(prefix) :]
                if "/" in rest and not recursive:
                    folders.add(prefix + rest.split("/")[0])
                    continue
                data = files[path]
                entry = {"type": "file", "oid": blob_id(data), "size": len(data), "path": path}
                if is_lfs(path, len(data)):
                    entry["lfs"] = {"oid": hashlib.sha256(data).hexdigest(), "size": len(data),
                                    "pointerSize": 130}  # fmt: skip
                entries.append(entry)
                parts = rest.split("/")[:-1]
                folders.update(prefix + "/".join(parts[: k + 1]) for k in range(len(parts)))
            entries += [{"type": "directory", "oid": blob_id(f.encode()), "size": 0, "path": f}
                        for f in sorted(folders)]  # fmt: skip
            self._json(entries)

        def _resolve(self, match: re.Match, body: bool) -> None:
            repo = hub.repos.get(match["repo"])
            commit = repo.resolve(match["rev"]) if repo else None
            if commit is None:
                return self._error(404, "Revision not found", "RevisionNotFound")
            data = repo.commits[commit].get(match["path"])
            if data is None:
                return self._error(404, "Entry not found", "EntryNotFound")
            etag = (hashlib.sha256(data).hexdigest() if is_lfs(match["path"], len(data))
                    else blob_id(data))  # fmt: skip
            self._send(200, data if body else data, {"X-Repo-Commit": commit, "ETag": f'"{etag}"',
                                                     "Accept-Ranges": "bytes"},
                       content_type="application/octet-stream")  # fmt: skip

    return Handler
