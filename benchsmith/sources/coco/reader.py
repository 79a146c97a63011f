"""COCO 2014 val: the layout, the captions reader, and the official download locations.

Layout (as COCO ships it)::

    ROOT/annotations/captions_val2014.json   (from annotations_trainval2014.zip)
    ROOT/val2014/COCO_val2014_000000391895.jpg ...   (from val2014.zip)

Captions are read with pycocotools. Every caption is kept with its annotation id, in file
order, because the original MMNeedle picks the *last listed* caption per image while our
canonical order picks among all of them by seed.
"""

from __future__ import annotations

import contextlib
import io
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.core.errors import SourceError
from benchsmith.core.hashing import sha256_file
from benchsmith.core.json_files import load_json

CAPTIONS_RELPATH = Path("annotations") / "captions_val2014.json"
IMAGES_DIRNAME = "val2014"
ANNOTATIONS_ZIP_URL = "http://images.cocodataset.org/annotations/annotations_trainval2014.zip"
IMAGES_ZIP_URL = "http://images.cocodataset.org/zips/val2014.zip"

#: COCO's captions are CC BY 4.0; the images keep their own Flickr licences (ids 1-8).
ANNOTATIONS_LICENSE = "CC BY 4.0"


@dataclass(frozen=True)
class CocoImage:
    image_id: int
    file_name: str
    width: int
    height: int
    license: int | None
    coco_url: str | None
    flickr_url: str | None


@dataclass(frozen=True)
class CocoCaption:
    annotation_id: int
    image_id: int
    caption: str  # exactly as in the file, stray whitespace and newlines included


@dataclass
class CocoCaptions:
    """Everything MMNeedle needs from ``captions_val2014.json``."""

    path: Path
    sha256: str
    images: list[CocoImage]  # in the order of ``images[]``
    captions: dict[int, list[CocoCaption]]  # image id -> captions in file order
    licenses: dict[int, dict[str, str]]
    skipped: Counter = field(default_factory=Counter)  # documented, counted skips

    @property
    def images_with_captions(self) -> list[CocoImage]:
        return [image for image in self.images if self.captions.get(image.image_id)]

    def license_name(self, license_id: int | None) -> str | None:
        if license_id is None:
            return None
        entry = self.licenses.get(license_id)
        return entry.get("name") if entry else f"license id {license_id}"


def normalize_caption(text: str) -> str:
    """Whitespace-collapsed, case-folded caption used to compare captions for equality."""
    return " ".join(text.split()).casefold().rstrip(".").strip()


def clean_caption(text: str) -> str:
    """Caption as shown to a model: internal whitespace and newlines collapsed to one space."""
    return " ".join(text.split())


def read_captions(path: str | Path) -> CocoCaptions:
    """Parse a COCO captions file; malformed input raises :class:`SourceError` naming the file.

    Skips (counted in ``skipped``, reported by the caller): images with no caption, and
    caption annotations that point to an image id missing from ``images[]``.
    """
    path = Path(path)
    if not path.is_file():
        raise SourceError(
            "COCO captions file not found",
            path=path,
            fix="run `benchsmith source sample coco` or `benchsmith source fetch coco`, or pass --captions",
        )
    raw = load_json(
        path,
        what="captions file",
        fix="re-download annotations_trainval2014.zip (`benchsmith source fetch coco`) or regenerate the sample",
    )
    _check_shape(raw, path)
    from pycocotools.coco import COCO  # imported here: listing sources must stay fast

    coco = COCO()
    coco.dataset = raw
    with contextlib.redirect_stdout(io.StringIO()):  # pycocotools prints progress to stdout
        coco.createIndex()

    images: list[CocoImage] = []
    seen: set[int] = set()
    for entry in raw["images"]:
        try:
            image = CocoImage(
                image_id=int(entry["id"]),
                file_name=str(entry["file_name"]),
                width=int(entry.get("width") or 0),
                height=int(entry.get("height") or 0),
                license=int(entry["license"]) if entry.get("license") is not None else None,
                coco_url=entry.get("coco_url"),
                flickr_url=entry.get("flickr_url"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise SourceError(
                f"images[] entry {entry!r:.120} lacks a valid id/file_name ({exc})", path=path
            ) from exc
        if image.image_id in seen:
            raise SourceError(f"image id {image.image_id} appears twice in images[]", path=path)
        seen.add(image.image_id)
        images.append(image)

    skipped: Counter = Counter()
    captions: dict[int, list[CocoCaption]] = {}
    for image in images:
        anns = coco.imgToAnns.get(image.image_id, [])
        if not anns:
            skipped["images_without_captions"] += 1
            continue
        captions[image.image_id] = [
            CocoCaption(int(ann["id"]), image.image_id, str(ann["caption"])) for ann in anns
        ]
    skipped["captions_for_unknown_images"] = sum(
        1 for ann in raw["annotations"] if int(ann["image_id"]) not in seen
    )
    licenses = {
        int(item["id"]): {k: str(v) for k, v in item.items()} for item in raw.get("licenses", [])
    }
    return CocoCaptions(path, sha256_file(path), images, captions, licenses, +skipped)


def _check_shape(raw: object, path: Path) -> None:
    if (
        not isinstance(raw, dict)
        or not isinstance(raw.get("images"), list)
        or not isinstance(raw.get("annotations"), list)
    ):
        raise SourceError(
            "not a COCO captions file: expected an object with `images` and `annotations` lists",
            path=path,
            fix="point --captions at annotations/captions_val2014.json",
        )
    for entry in raw["images"]:
        if (
            not isinstance(entry, dict)
            or not _is_int(entry.get("id"))
            or not isinstance(entry.get("file_name"), str)
        ):
            raise SourceError(
                f"images[] entry {entry!r:.120} lacks a valid integer id and file_name", path=path
            )
    for ann in raw["annotations"]:
        if not isinstance(ann, dict) or not {"id", "image_id", "caption"} <= ann.keys():
            raise SourceError(
                f"caption annotation {ann!r:.120} lacks id/image_id/caption", path=path
            )
        if (
            not _is_int(ann["id"])
            or not _is_int(ann["image_id"])
            or not isinstance(ann["caption"], str)
        ):
            raise SourceError(
                f"caption annotation {ann!r:.120} needs integer id/image_id and a string caption",
                path=path,
            )


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def default_images_dir(captions_path: str | Path) -> Path:
    """``ROOT/val2014`` next to ``ROOT/annotations/captions_val2014.json``."""
    return Path(captions_path).resolve().parent.parent / IMAGES_DIRNAME
