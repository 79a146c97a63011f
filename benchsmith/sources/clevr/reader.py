"""CLEVR v1.0: the layout, the scenes reader and its checks.

Layout (as in the official ``CLEVR_v1.0.zip``)::

    CLEVR_v1.0/scenes/CLEVR_train_scenes.json   {"info": {...}, "scenes": [...]}
    CLEVR_v1.0/scenes/CLEVR_val_scenes.json
    CLEVR_v1.0/images/train/CLEVR_train_000000.png ...   (480x320 RGBA PNG)
    CLEVR_v1.0/images/val/CLEVR_val_000000.png ...

The test split ships no scenes, so only ``train`` and ``val`` can be read. The scene files are
read with plain ``json.load``: simple, and fast enough for a step that runs once per build (a
synthetic 70,000-scene, 83 MB file took about 7 s and stayed under 1 GB of memory on a 2-core
machine; the real train file is larger, so expect proportionally more). The pairwise
``relationships`` (most of the file) are dropped after reading: the returned scenes keep only
objects and file names.

The sample writer and the fetch helpers live in ``clevr_sample`` and ``clevr_fetch`` and are
re-exported here lazily.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.core.errors import SourceError
from benchsmith.core.json_files import load_json

CLEVR_URL = "https://dl.fbaipublicfiles.com/clevr/CLEVR_v1.0.zip"
CLEVR_DIRNAME = "CLEVR_v1.0"
CLEVR_LICENSE = "CC BY 4.0"
SCENE_SPLITS = ("train", "val")
CLEVR_VOCAB = {
    "size": ("large", "small"),
    "color": ("gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow"),
    "material": ("rubber", "metal"),
    "shape": ("cube", "sphere", "cylinder"),
}
SCENE_KEYS = ("split", "image_index", "image_filename", "objects")

_FIX = (
    "point the CLEVR root at the CLEVR_v1.0 folder (holding scenes/ and images/), e.g. by "
    "running the CLEVR fetch again or regenerating the sample"
)


@dataclass(frozen=True)
class ClevrScene:
    split: str
    image_index: int
    image_filename: str
    image_path: Path
    objects: tuple[dict, ...]  # each with at least color, size, shape, material (dicts as read)

    def count(self, attribute: str, value: str) -> int:
        """How many objects have ``attribute == value`` (the CLEVR count-induction answer)."""
        return sum(1 for obj in self.objects if obj[attribute] == value)


def scenes_path(root: str | Path, split: str) -> Path:
    return Path(root) / "scenes" / f"CLEVR_{split}_scenes.json"


def images_dir(root: str | Path, split: str) -> Path:
    return Path(root) / "images" / split


def read_clevr_scenes(
    root: str | Path, split: str, *, check_images: bool = True, limit: int | None = None
) -> list[ClevrScene]:
    """The scenes of ``split`` in file order, checked against :data:`CLEVR_VOCAB`.

    ``limit`` keeps the first ``limit`` scenes (the whole file is still parsed, because JSON
    cannot be read partially); only those are checked. ``check_images`` makes a scene whose
    PNG is missing an error naming both.
    """
    root = Path(root)
    path = scenes_path(root, split)
    if split not in SCENE_SPLITS:
        raise SourceError(
            f"CLEVR split {split!r} has no scenes; only {SCENE_SPLITS} do",
            path=path,
            fix="read the train or val split",
        )
    if not path.is_file():
        hint = f" (found {CLEVR_DIRNAME}/ inside it)" if (root / CLEVR_DIRNAME).is_dir() else ""
        raise SourceError(f"CLEVR scenes file not found{hint}", path=path, fix=_FIX)
    raw = load_json(
        path,
        what="CLEVR scenes file",
        fix="re-extract it from CLEVR_v1.0.zip (rerun the CLEVR fetch) or regenerate the sample",
    )
    if not isinstance(raw, dict) or not isinstance(raw.get("scenes"), list):
        raise SourceError(
            "not a CLEVR scenes file: expected an object with a `scenes` list", path=path, fix=_FIX
        )
    entries = raw["scenes"] if limit is None else raw["scenes"][: max(limit, 0)]
    del raw  # drop relationships/directions of the scenes not kept (most of the memory)
    folder = images_dir(root, split)
    scenes = [_scene(entry, k, split, path, folder) for k, entry in enumerate(entries)]
    if check_images:
        _check_images(scenes, folder, path)
    return scenes


def _scene(entry: Any, k: int, split: str, path: Path, folder: Path) -> ClevrScene:
    where = f"scenes[{k}]"
    if not isinstance(entry, dict):
        raise SourceError(f"{where} is not an object", path=path, fix=_FIX)
    missing = [key for key in SCENE_KEYS if key not in entry]
    if missing:
        raise SourceError(f"{where} lacks key(s) {missing}", path=path, fix=_FIX)
    name, index, objects = entry["image_filename"], entry["image_index"], entry["objects"]
    where = f"{where} ({name})"
    if entry["split"] != split:
        raise SourceError(
            f"{where} says split {entry['split']!r} in the {split} scenes file", path=path, fix=_FIX
        )
    if not isinstance(index, int) or isinstance(index, bool):
        raise SourceError(f"{where}: image_index {index!r} is not an integer", path=path, fix=_FIX)
    if (
        not isinstance(name, str)
        or not name
        or os.path.basename(name) != name
        or name in ("..", ".")
    ):
        raise SourceError(f"{where}: image_filename is not a plain file name", path=path, fix=_FIX)
    if not isinstance(objects, list):
        raise SourceError(f"{where}: objects is not a list", path=path, fix=_FIX)
    for j, obj in enumerate(objects):
        _check_object(obj, f"{where} objects[{j}]", path)
    return ClevrScene(split, index, name, folder / name, tuple(objects))


def _check_object(obj: Any, where: str, path: Path) -> None:
    if not isinstance(obj, dict):
        raise SourceError(f"{where} is not an object", path=path, fix=_FIX)
    missing = [key for key in CLEVR_VOCAB if key not in obj]
    if missing:
        raise SourceError(f"{where} lacks key(s) {missing}", path=path, fix=_FIX)
    for attribute, values in CLEVR_VOCAB.items():
        if obj[attribute] not in values:
            raise SourceError(
                f"{where}: {attribute} {obj[attribute]!r} is not in the CLEVR vocabulary {values}",
                path=path,
                fix="use the official CLEVR v1.0 scenes (or fix the generator that wrote this file)",
            )


def _check_images(scenes: list[ClevrScene], folder: Path, path: Path) -> None:
    """One listing of ``images/<split>/`` instead of 70,000 stat calls."""
    try:
        present = {entry.name for entry in os.scandir(folder) if entry.is_file()}
    except (FileNotFoundError, NotADirectoryError):
        present = set()
    for k, scene in enumerate(scenes):
        if scene.image_filename not in present:
            raise SourceError(
                f"scenes[{k}] (image_index {scene.image_index}) names {scene.image_filename}, "
                f"but {scene.image_path} does not exist",
                path=path,
                fix="extract images/ from CLEVR_v1.0.zip completely (rerun the CLEVR fetch), or "
                "regenerate the sample",
            )
