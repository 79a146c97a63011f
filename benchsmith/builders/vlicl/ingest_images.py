"""Where the images of an ingested VL-ICL release are: path resolution and zip extraction.

The release JSON names images relative to ROOT (``clevr/support/CLEVR_train_010840.png``).
Zips are extracted into ``ROOT/<task>/`` like the release's ``unzip.sh`` (or into a separate
images root of the same shape), image members only, through :func:`safe_extract_zip` (HF's
scanner flags these zips as "pickle": nothing in them is ever unpickled or executed). Since
zips come as ``support/x.png`` or ``<task>/support/x.png``, an image path is resolved by trying
``ROOT/<path>``, then ``ROOT/<task>/<path>``, then a unique file of the same basename under
``ROOT/<task>/`` (spec §7). Nothing is extracted when every image already resolves, so a rerun
does no work.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath
from typing import Any

from benchsmith.builders.vlicl import ImageHashes, image_ref, relative_posix
from benchsmith.core.errors import SourceError
from benchsmith.core.records import source_ref
from benchsmith.sources.fetching.archive import safe_extract_zip

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".bmp", ".webp")
LICENSE = "VL-ICL release (code MIT); images keep their source datasets' licences"
URL = "https://huggingface.co/datasets/ys-zong/VL-ICL"
RELEASE_FIX = "download the VL-ICL release (huggingface.co/datasets/ys-zong/VL-ICL) and point the ingest root at the folder holding <task>/query.json"


def is_image_member(name: str) -> bool:
    """Zip members worth extracting: images only (the release zips hold nothing else useful)."""
    return PurePosixPath(name).suffix.lower() in IMAGE_SUFFIXES


class ImageResolver:
    """Maps the release's image paths to files: ROOT/path, ROOT/task/path, then basename."""

    def __init__(self, root: Path, task: str):
        self.root = Path(root)
        self.task = task
        self._by_name: dict[str, list[Path]] | None = None

    def _index(self) -> dict[str, list[Path]]:
        if self._by_name is None:
            index: dict[str, list[Path]] = {}
            for folder, dirs, files in os.walk(self.root / self.task):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    index.setdefault(name, []).append(Path(folder) / name)
            self._by_name = index
        return self._by_name

    def resolve(self, path: str, where: Path) -> Path | None:
        clean = PurePosixPath(str(path).replace("\\", "/"))
        if clean.is_absolute() or ".." in clean.parts or not clean.parts:
            raise SourceError(
                f"image path {path!r} is absolute or leaves the release folder",
                path=where,
                fix=RELEASE_FIX,
            )
        for candidate in (
            self.root.joinpath(*clean.parts),
            self.root.joinpath(self.task, *clean.parts),
        ):
            if candidate.is_file():
                return candidate
        matches = self._index().get(clean.name, [])
        if len(matches) > 1:
            raise SourceError(
                f"image {path!r} is not at ROOT/<path> or ROOT/{self.task}/<path> and its basename "
                f"matches {len(matches)} files: {[str(m) for m in matches[:3]]}",
                path=where,
                fix="extract the zips so that the JSON paths resolve (unzip inside ROOT/<task>/)",
            )
        return matches[0] if matches else None

    def forget(self) -> None:
        self._by_name = None


def as_list(value: Any) -> list[str]:
    """The release writes one image as a string and several as a list; always a list."""
    return [value] if isinstance(value, str) else list(value or [])


# tasks whose queries store their episode's support images (open_mi and the 2-way T2I tasks)
EPISODES_IN_QUERIES = ("open_mi", "open_t2i_mi", "fast_count_t2i", "fast_attr_t2i")


def referenced_images(task: str, split: str, entries: list[dict]) -> list[str]:
    """Every image path an entry names (query/support images of all shapes)."""
    paths: list[str] = []
    for entry in entries:
        if task == "matching_mi" and split == "support":
            for key in ("same", "diff"):
                paths += as_list((entry.get(key) or {}).get("image"))
        else:
            paths += as_list(entry.get("image"))
        if task in EPISODES_IN_QUERIES and split == "query":
            for stored in (entry.get("support") or {}).values():
                paths += as_list(stored.get("images"))
    return paths


class ReleaseImages:
    """Resolves (extracting zips once if needed) and turns paths into refs + provenance."""

    def __init__(self, release: Path, images_root: Path, task: str, hashes: ImageHashes):
        self.release, self.root = Path(release), Path(images_root)
        self.task, self.hashes = task, hashes
        self.resolver = ImageResolver(self.root, task)
        self.extracted: list[str] = []

    def ensure(self, paths: list[str], where: Path) -> None:
        if all(self.resolver.resolve(p, where) is not None for p in paths):
            return
        for name in ("support.zip", "query.zip"):
            archive = self.release / self.task / name
            if archive.is_file():
                safe_extract_zip(
                    archive,
                    self.root / self.task,
                    members=is_image_member,
                    corrupt_fix=f"download {self.task}/{name} of the VL-ICL release again "
                    "(huggingface.co/datasets/ys-zong/VL-ICL) and replace this file",
                )
                self.extracted.append(name)
        self.resolver.forget()
        missing = [p for p in paths if self.resolver.resolve(p, where) is None]
        if missing:
            raise SourceError(
                f"{len(missing)} image(s) named in {self.task}/*.json were found neither as files "
                f"nor in the zips, e.g. {missing[0]!r}",
                path=where,
                fix="download support.zip and query.zip of the task into ROOT/<task>/ (or unzip them there)",
            )

    def refs(
        self, paths: list[str], split: str, entry_id: str, where: Path
    ) -> tuple[list[dict], list[dict]]:
        refs, sources = [], []
        for path in paths:
            found = self.resolver.resolve(path, where)
            assert found is not None  # ensure() ran first
            file, sha = relative_posix(found, self.root), self.hashes(found)
            refs.append(image_ref("ingest", file, sha))
            sources.append(
                source_ref(
                    dataset="vl-icl",
                    split=split,
                    id=entry_id,
                    file=file,
                    sha256=sha,
                    license=LICENSE,
                    url=URL,
                )
            )
        return refs, sources
