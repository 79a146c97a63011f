"""``benchsmith push`` against a Hub API server on 127.0.0.1: push, tag, download, load.

The push and the download run as separate processes with the environment a user sets
(``HF_ENDPOINT``, ``HF_TOKEN``); ``huggingface_hub`` reads it when it is imported, and the test
session itself runs with the Hub offline.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import datasets
import pytest
from hub_api_server import HubApiServer

from benchsmith.hf.reader import readme_configs

TOKEN = "hf_test_secret_0123456789"
REPO = "bench-org/vlicl"


def run(args: list[str], hub: HubApiServer, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_HUB_OFFLINE")}
    env.update(HF_ENDPOINT=hub.endpoint, HF_TOKEN=TOKEN, HF_HUB_DISABLE_XET="1",
               HF_HOME=str(cwd / "hf_home"), HF_HUB_DISABLE_PROGRESS_BARS="1")  # fmt: skip
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def push(folder: Path, hub: HubApiServer, cwd: Path, *extra: str) -> subprocess.CompletedProcess:
    return run([sys.executable, "-m", "benchsmith", "push", str(folder), "--repo", REPO, *extra],
               hub, cwd)  # fmt: skip


def download(hub: HubApiServer, revision: str, target: Path, cwd: Path) -> None:
    code = ("import sys\nfrom huggingface_hub import snapshot_download\n"
            "snapshot_download(sys.argv[1], repo_type='dataset', revision=sys.argv[2], "
            "local_dir=sys.argv[3])\n")  # fmt: skip
    done = run([sys.executable, "-c", code, REPO, revision, str(target)], hub, cwd)
    assert done.returncode == 0, done.stderr


def tables(folder: Path) -> dict[tuple[str, str], object]:
    out = {}
    for config in readme_configs(folder):
        name = config["config_name"]
        loaded = datasets.load_dataset(str(folder), name)
        for split, ds in loaded.items():
            out[name, split] = ds.data.table
    return out


@pytest.fixture
def hub():
    with HubApiServer() as server:
        yield server


@pytest.fixture
def published(sample_project, tmp_path) -> Path:
    folder = tmp_path / "published" / "vlicl"
    shutil.copytree(sample_project / "published" / "vlicl", folder)
    return folder


def test_push_tag_download_load(published, hub, tmp_path):
    done = push(published, hub, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "tag v0.1.0" in done.stderr and TOKEN not in done.stdout + done.stderr
    repo = hub.repos[REPO]
    assert set(repo.tags) == {"v0.1.0"} and repo.tags["v0.1.0"] == repo.branches["main"]
    assert not repo.private
    local = {p.relative_to(published).as_posix(): p.read_bytes()
             for p in published.rglob("*") if p.is_file() and not p.name.startswith(".")}  # fmt: skip
    assert (published / ".benchsmith-output").is_file()  # the folder's marker stays local
    remote = hub.files(REPO, "v0.1.0")
    assert {k: v for k, v in remote.items() if k != ".gitattributes"} == local
    writes = [r for r in hub.requests if r.method in ("POST", "PUT") and "lfs-upload" not in r.path]
    assert writes and all(r.authorization == f"Bearer {TOKEN}" for r in writes)
    assert any(r.path.endswith("/info/lfs/objects/batch") for r in hub.requests)  # LFS parquet
    assert any(r.path == "/api/validate-yaml" for r in hub.requests)

    fresh = tmp_path / "elsewhere" / "vlicl"
    download(hub, "v0.1.0", fresh, tmp_path)
    ours, theirs = tables(published), tables(fresh)
    assert ours.keys() == theirs.keys() and len(ours) >= 6
    for key, table in ours.items():
        assert theirs[key].equals(table), key

    # the same version again: nothing uploaded, no new commit
    commits = len(repo.commits)
    again = push(published, hub, tmp_path)
    assert again.returncode == 0 and "nothing uploaded" in again.stderr
    assert len(repo.commits) == commits


def test_a_version_is_immutable(published, hub, tmp_path):
    assert push(published, hub, tmp_path).returncode == 0
    info = json.loads((published / "build_info.json").read_text())
    info["note"] = "changed after the release"
    (published / "build_info.json").write_text(json.dumps(info))
    before = dict(hub.repos[REPO].branches)
    refused = push(published, hub, tmp_path)
    assert refused.returncode == 2
    assert "already has v0.1.0 with other content" in refused.stderr
    assert "build_info.json" in refused.stderr and "new --version" in refused.stderr
    assert hub.repos[REPO].branches == before
    # a stale shard on the branch goes when a new version replaces data/
    hub.repos[REPO].commits[before["main"]]["data/old-shard.parquet"] = b"PAR1"
    done = push(published, hub, tmp_path, "--tag", "v0.1.1", "--private")
    assert done.returncode == 0, done.stderr
    assert "data/old-shard.parquet" not in hub.files(REPO, "v0.1.1")
    assert json.loads(hub.files(REPO, "v0.1.1")["build_info.json"])["note"]
    assert hub.files(REPO, "v0.1.0")["build_info.json"] != hub.files(REPO, "v0.1.1")[
        "build_info.json"]  # fmt: skip


def test_card_checks_and_bad_input(published, hub, tmp_path):
    readme = published / "README.md"
    text = readme.read_text("utf-8")
    size = re.search(r"^size_categories:\n- (.+)\n", text, re.M)
    assert size and size[1] in ("n<1K", "1K<n<10K", "10K<n<100K")  # the sample's rows
    readme.write_text(text.replace(size[0], ""), "utf-8")
    done = push(published, hub, tmp_path)
    assert done.returncode == 2 and "lacks size_categories" in done.stderr
    assert not hub.requests  # refused before anything was sent
    readme.write_text(text.replace(size[0], "size_categories:\n- huge\n"), "utf-8")
    done = push(published, hub, tmp_path)
    assert done.returncode == 2 and "the Hub rejects the card's metadata" in done.stderr
    assert "huge" in done.stderr and REPO not in hub.repos
    readme.write_text(text, "utf-8")
    bad = run([sys.executable, "-m", "benchsmith", "push", str(published), "--repo", "noslash"],
              hub, tmp_path)  # fmt: skip
    assert bad.returncode == 2 and "OWNER/NAME" in bad.stderr
    hub_down = subprocess.run(
        [sys.executable, "-m", "benchsmith", "push", str(published), "--repo", REPO],
        env={**os.environ, "HF_ENDPOINT": "http://127.0.0.1:9", "HF_TOKEN": TOKEN,
             "HF_HUB_OFFLINE": "0", "HF_HOME": str(tmp_path / "hf_home")},
        capture_output=True, text=True, timeout=120)  # fmt: skip
    assert hub_down.returncode == 2 and "cannot reach the Hub" in hub_down.stderr
    assert TOKEN not in hub_down.stderr


@pytest.mark.parametrize("fault", ["lfs storage full", "html instead of json"])
def test_a_hub_that_fails_mid_push_is_one_clear_line(published, hub, tmp_path, fault):
    """An LFS upload the storage refuses, or an HTML page where the API answers JSON: one
    error line naming the Hub and the fix, exit 2, no traceback, no token; nothing tagged."""
    if fault == "lfs storage full":
        hub.lfs_storage_full = True
    else:
        hub.html_for.add("/api/repos/create")
    done = push(published, hub, tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and TOKEN not in done.stderr
    first = done.stderr.strip().splitlines()[0]
    assert hub.endpoint in first, done.stderr
    assert "fix:" in done.stderr and "push again" in done.stderr
    assert not any(r.path.endswith("/tag/main") for r in hub.requests)
