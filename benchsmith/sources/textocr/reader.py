"""TextOCR v0.1: the layout, the annotation reader and its checks.

Layout (the official downloads, unpacked side by side)::

    TextOCR/TextOCR_0.1_train.json   {"info", "imgs", "anns", "imgToAnns"}
    TextOCR/TextOCR_0.1_val.json
    TextOCR/train_images/<image id>.jpg   (train_val_images.zip: TextOCR's train *and* val
                                            images are Open Images train images)

``imgs`` maps an image id to ``{id, width, height, set, file_name: "train/<id>.jpg"}``;
``anns`` maps an annotation id (``<image id>_<n>``) to ``{id, image_id, bbox: [x, y, w, h],
points: [x1, y1, x2, y2, ...], utf8_string, area}``; ``imgToAnns`` lists each image's
annotation ids. A word written ``"."`` is TextOCR's mark for an illegible one. Some
third-party notes call the index ``img2Anns``: both names are accepted, and the index is
checked against the annotations' own ``image_id`` (it is rebuilt from them, never trusted
alone). ``file_name``'s folder (``train/``) is not the folder the images zip unpacks to, so an
image is looked up as ``train_images/<basename>`` first, then at ``file_name`` itself.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from benchsmith.core.errors import SourceError
from benchsmith.core.json_files import load_json

TEXTOCR_DIRNAME = "TextOCR"
SPLITS = ("train", "val")
IMAGES_DIRNAME = "train_images"
ILLEGIBLE = "."  # TextOCR's transcription of a word nobody could read
TEXTOCR_URL = "https://textvqa.org/textocr/"
ANNOTATIONS_URL = "https://dl.fbaipublicfiles.com/textvqa/data/textocr/TextOCR_0.1_{split}.json"
IMAGES_URL = "https://dl.fbaipublicfiles.com/textvqa/images/train_val_images.zip"
TEXTOCR_LICENSE = "CC BY 4.0 (TextOCR annotations); images: Open Images, CC BY 2.0"
INDEX_KEYS = ("imgToAnns", "img2Anns")

_FIX = (
    "point the TextOCR root at the folder holding TextOCR_0.1_{train,val}.json and "
    "train_images/ (from train_val_images.zip), or regenerate the sample "
    "(`benchsmith source sample textocr`)"
)


@dataclass(frozen=True)
class TextocrWord:
    """One annotated word: its box ``[x, y, w, h]``, its polygon and what it says."""

    id: str
    image_id: str
    bbox: tuple[float, float, float, float]
    points: tuple[float, ...]
    text: str
    area: float

    @property
    def box_area(self) -> float:
        """``w * h`` of the box, computed (the recorded ``area`` is kept, never relied on)."""
        return self.bbox[2] * self.bbox[3]


@dataclass(frozen=True)
class TextocrImage:
    id: str
    split: str
    width: int
    height: int
    file_name: str
    path: Path
    words: tuple[TextocrWord, ...]  # sorted by annotation id


def annotations_path(root: str | Path, split: str) -> Path:
    return Path(root) / f"TextOCR_0.1_{split}.json"


def image_path(root: str | Path, file_name: str) -> Path:
    """Where the image of ``file_name`` is: ``train_images/<name>`` (the zip's layout), else
    ``file_name`` under the root when only that exists."""
    root = Path(root)
    unpacked = root / IMAGES_DIRNAME / PurePosixPath(file_name).name
    as_named = root / PurePosixPath(file_name)
    return as_named if not unpacked.is_file() and as_named.is_file() else unpacked


def read_textocr(root: str | Path, split: str, *, check_images: bool = True) -> list[TextocrImage]:
    """The images of ``split`` sorted by id, each with its words; every field is checked.

    ``check_images`` makes an image whose file is missing an error naming both.
    """
    root = Path(root)
    path = annotations_path(root, split)
    if split not in SPLITS:
        raise SourceError(f"TextOCR split {split!r} is not one of {SPLITS}", path=path,
                          fix="read the train or val split")  # fmt: skip
    if not path.is_file():
        inside = root / TEXTOCR_DIRNAME
        hint = f" (found {TEXTOCR_DIRNAME}/ inside it)" if inside.is_dir() else ""
        raise SourceError(f"TextOCR annotations file not found{hint}", path=path, fix=_FIX)
    raw = load_json(path, what="TextOCR annotations file",
                    fix=f"download it again from {ANNOTATIONS_URL.format(split=split)}")  # fmt: skip
    if not isinstance(raw, dict) or not isinstance(raw.get("imgs"), dict):
        raise SourceError("not a TextOCR annotations file: expected an object with `imgs`, "
                          "`anns` and `imgToAnns`", path=path, fix=_FIX)  # fmt: skip
    anns = raw.get("anns")
    if not isinstance(anns, dict):
        raise SourceError("`anns` is missing or not an object", path=path, fix=_FIX)
    words: dict[str, list[TextocrWord]] = {image_id: [] for image_id in raw["imgs"]}
    for key, entry in anns.items():
        word = _word(key, entry, path)
        if word.image_id not in words:
            raise SourceError(f"anns[{key!r}] names image {word.image_id!r}, which `imgs` lacks",
                              path=path, fix=_FIX)  # fmt: skip
        words[word.image_id].append(word)
    _check_index(raw, words, path)
    images = [
        _image(key, entry, split, root, path, sorted(words[key], key=lambda w: w.id))
        for key, entry in sorted(raw["imgs"].items())
    ]
    if check_images:
        _check_image_files(images, path)
    return images


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _word(key: str, entry: Any, path: Path) -> TextocrWord:
    where = f"anns[{key!r}]"
    if not isinstance(entry, dict):
        raise SourceError(f"{where} is not an object", path=path, fix=_FIX)
    missing = [k for k in ("id", "image_id", "bbox", "points", "utf8_string") if k not in entry]
    if missing:
        raise SourceError(f"{where} lacks key(s) {missing}", path=path, fix=_FIX)
    if str(entry["id"]) != key:
        raise SourceError(f"{where} has id {entry['id']!r}", path=path, fix=_FIX)
    bbox, points = entry["bbox"], entry["points"]
    if (
        not (isinstance(bbox, list) and len(bbox) == 4 and all(_number(v) for v in bbox))
        or min(bbox[2:]) < 0
    ):
        raise SourceError(f"{where}: bbox {bbox!r} is not [x, y, w, h] with w, h >= 0",
                          path=path, fix=_FIX)  # fmt: skip
    if not isinstance(points, list) or len(points) % 2 or not all(_number(v) for v in points):
        raise SourceError(f"{where}: points is not a flat list of x, y pairs", path=path, fix=_FIX)
    if not isinstance(entry["utf8_string"], str):
        raise SourceError(f"{where}: utf8_string is not a string", path=path, fix=_FIX)
    area = entry.get("area", -1.0)
    return TextocrWord(
        id=key,
        image_id=str(entry["image_id"]),
        bbox=tuple(float(v) for v in bbox),  # type: ignore[arg-type]
        points=tuple(float(v) for v in points),
        text=entry["utf8_string"],
        area=float(area) if _number(area) else -1.0,
    )


def _check_index(raw: dict, words: dict[str, list[TextocrWord]], path: Path) -> None:
    """``imgToAnns`` (when present) lists exactly the annotations that name each image."""
    name = next((k for k in INDEX_KEYS if k in raw), None)
    if name is None:
        return
    index = raw[name]
    if not isinstance(index, dict):
        raise SourceError(f"`{name}` is not an object", path=path, fix=_FIX)
    for image_id, listed in index.items():
        if image_id not in words:
            raise SourceError(f"{name}[{image_id!r}]: no such image in `imgs`", path=path, fix=_FIX)
        if not isinstance(listed, list) or sorted(map(str, listed)) != sorted(
            w.id for w in words[image_id]
        ):
            raise SourceError(
                f"{name}[{image_id!r}] does not list the annotations whose image_id is "
                f"{image_id!r}",
                path=path,
                fix="use the official file (the index and the annotations disagree)",
            )


def _image(
    key: str, entry: Any, split: str, root: Path, path: Path, words: list[TextocrWord]
) -> TextocrImage:
    where = f"imgs[{key!r}]"
    if not isinstance(entry, dict):
        raise SourceError(f"{where} is not an object", path=path, fix=_FIX)
    missing = [k for k in ("id", "width", "height", "file_name") if k not in entry]
    if missing:
        raise SourceError(f"{where} lacks key(s) {missing}", path=path, fix=_FIX)
    width, height, file_name = entry["width"], entry["height"], entry["file_name"]
    if str(entry["id"]) != key or not key or os.path.basename(key) != key or key in ("..", "."):
        raise SourceError(f"{where}: id {entry['id']!r} is not the key's plain name",
                          path=path, fix=_FIX)  # fmt: skip
    if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in (width, height)):
        raise SourceError(f"{where}: width and height must be positive integers",
                          path=path, fix=_FIX)  # fmt: skip
    parts = PurePosixPath(str(file_name)).parts
    if not isinstance(file_name, str) or not parts or ".." in parts or file_name.startswith("/"):
        raise SourceError(f"{where}: file_name {file_name!r} is not a relative path",
                          path=path, fix=_FIX)  # fmt: skip
    return TextocrImage(key, split, width, height, file_name, image_path(root, file_name),
                        tuple(words))  # fmt: skip


def _check_image_files(images: list[TextocrImage], path: Path) -> None:
    """One listing per image folder instead of a stat call per image."""
    listings: dict[Path, set[str]] = {}
    for image in images:
        folder = image.path.parent
        if folder not in listings:
            try:
                listings[folder] = {e.name for e in os.scandir(folder) if e.is_file()}
            except (FileNotFoundError, NotADirectoryError):
                listings[folder] = set()
        if image.path.name not in listings[folder]:
            raise SourceError(
                f"imgs[{image.id!r}] names {image.file_name}, but {image.path} does not exist",
                path=path,
                fix=f"unpack train_val_images.zip ({IMAGES_URL}) into the TextOCR folder so "
                f"{IMAGES_DIRNAME}/ holds every image, or regenerate the sample",
            )
