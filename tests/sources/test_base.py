"""Every registered source: sample writes its real layout, check accepts it, prepare follows
the profile, and verbs a source lacks are refused with the ones it has."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.outputs import MARKER
from benchsmith.sources import SOURCES

SAMPLE_OPTIONS = {
    "coco": {"n_images": 40},
    "miniimagenet": {},
    "clevr": {},
    "textocr": {},
    "vlicl_release": {},
    "scannet": {},
    "exams": {},
}


def tree_hashes(root: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file below ``root``, following linked folders."""
    out = {}
    for folder, _, files in os.walk(root, followlinks=True):
        for name in files:
            if name == MARKER:
                continue  # benchsmith's own "I wrote this folder" file, not part of the layout
            path = Path(folder) / name
            out[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return dict(sorted(out.items()))


@pytest.mark.parametrize("name", SOURCES.names())
def test_sample_is_checked_by_its_own_check_and_is_deterministic(name: str, tmp_path: Path) -> None:
    source = SOURCES.get(name)
    assert "sample" in source.verbs and "check" in source.verbs
    options = SAMPLE_OPTIONS[name]
    root = source.sample(tmp_path / "a", seed=0, **options)
    assert root == source.read_root(tmp_path / "a")
    summary = source.check(tmp_path / "a", no_counts=True)
    assert summary["root"]
    again = source.sample(tmp_path / "b", seed=0, **options)
    other = source.sample(tmp_path / "c", seed=1, **options)
    assert tree_hashes(root) == tree_hashes(again)
    assert tree_hashes(root) != tree_hashes(other)


@pytest.mark.parametrize("name", SOURCES.names())
def test_prepare_samples_in_the_sample_profile_and_links_local_dir_in_full(
    name: str, tmp_path: Path
) -> None:
    source = SOURCES.get(name)
    params = {"profile": "sample", "seed": 0, "sources": {name: {"sample": SAMPLE_OPTIONS[name]}}}
    sample_root = source.prepare(tmp_path / "sample", params)
    assert tree_hashes(sample_root) == tree_hashes(
        source.sample(tmp_path / "direct", seed=0, **SAMPLE_OPTIONS[name])
    )
    local = source.read_root(tmp_path / "sample")
    full = {"profile": "full", "sources": {name: {"full": {"local_dir": str(local)}}}}
    linked = source.prepare(tmp_path / "linked", full)
    assert linked == source.read_root(tmp_path / "linked")
    assert tree_hashes(linked) == tree_hashes(local) != {}


def test_a_source_without_fetch_says_which_verbs_it_has(tmp_path: Path) -> None:
    mini = SOURCES.get("miniimagenet")
    assert "fetch" not in mini.verbs
    with pytest.raises(BenchsmithError, match="has no `fetch`") as info:
        mini.fetch(tmp_path)
    assert "benchsmith source link miniimagenet" in str(info.value)
    with pytest.raises(BenchsmithError, match="licence-gated") as info:
        mini.prepare(tmp_path / "out", {"profile": "full"})
    assert "sources.miniimagenet.full.local_dir" in str(info.value)


def test_unknown_source_lists_the_known_ones() -> None:
    with pytest.raises(BenchsmithError, match="unknown source 'imagenet'") as info:
        SOURCES.get("imagenet")
    assert all(name in str(info.value) for name in SOURCES.names())


def test_a_typo_in_the_params_block_is_an_error_naming_the_valid_keys(tmp_path: Path) -> None:
    coco = SOURCES.get("coco")
    params = {"profile": "sample", "sources": {"coco": {"sample": {"n_imagse": 30}}}}
    with pytest.raises(BenchsmithError, match="sources.coco.sample: n_imagse") as info:
        coco.prepare(tmp_path / "out", params)
    assert "n_images" in str(info.value) and not (tmp_path / "out").exists()
    full = {"profile": "full", "sources": {"coco": {"full": {"local_dri": "/x"}}}}
    with pytest.raises(BenchsmithError, match="local_dri") as info:
        coco.prepare(tmp_path / "out", full)
    assert "local_dir" in str(info.value)


def test_a_full_profile_download_error_names_the_params_keys_and_the_copy_you_have(tmp_path):
    """What `dvc repro` runs is `source prepare` (no flags): a failed download says which
    params key sets the URL and how to use a copy instead, never only "check the network"."""
    from http_server import FileServer

    with FileServer(tmp_path / "empty") as server:  # serves nothing: every URL is a 404
        full = {"profile": "full", "sources": {"coco": {"full": {
            "annotations_url": server.url("annotations_trainval2014.zip"),
            "images_url": server.url("val2014.zip")}}}}  # fmt: skip
        with pytest.raises(BenchsmithError) as info:
            SOURCES.get("coco").prepare(tmp_path / "coco", full)
    message = str(info.value)
    assert "HTTP 404" in message
    assert "sources.coco.full.local_dir" in message
    assert f"benchsmith source link coco --out {tmp_path / 'coco'} DIR" in message
    with pytest.raises(BenchsmithError) as info:
        SOURCES.get("scannet").prepare(tmp_path / "scannet", {"profile": "full"})
    message = str(info.value)
    assert (
        "give sources.scannet.full.base_url in params.yaml" in message
        and "--base-url" not in message
    )
    assert "sources.scannet.full.local_dir" in message
