"""Write a miniature TextOCR v0.1 in the real layout (sample mode).

The annotation files carry the real keys (``info``, ``imgs`` with ``id/width/height/set/
file_name``, ``anns`` with ``id/image_id/bbox/points/utf8_string/area``, ``imgToAnns``) and the
images sit in ``train_images/`` as the official zip unpacks them, so one reader serves the
sample and the real files. Images are JPEGs (Open Images are) with real words drawn in Pillow's
embedded font, so the word in a box can be read off the pixels; each box is the word's drawn
extent and each polygon its four corners.

Coverage is guaranteed, not left to chance, because these are the cases the VL-ICL rule
(the largest legible, axis-aligned word) must get right:

* image 0 of each split: the largest word is drawn rotated (its polygon is not its box);
* image 1: the largest box is illegible scribble, transcribed ``"."`` as TextOCR does;
* the last image: only an illegible and a rotated word, so it has no usable word at all.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from benchsmith.core.atomic import atomic_directory
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.rng import derived_rng
from benchsmith.sources.textocr.reader import (
    ILLEGIBLE,
    IMAGES_DIRNAME,
    SPLITS,
    TEXTOCR_DIRNAME,
    annotations_path,
)

SIZES = ((320, 240), (256, 320), (384, 256))  # (width, height), cycled per image
WORDS = ("EXIT", "CAFE", "PARK", "SALE", "OPEN", "STOP", "HOTEL", "TAXI", "BANK", "MENU",
         "ZONE", "PIZZA", "BOOKS", "MARKET", "POLICE", "BAKERY", "GARAGE", "TICKETS", "PHARMACY",
         "LIBRARY", "MUSEUM", "STATION", "CINEMA", "GALLERY")  # fmt: skip
ROTATION_DEG = 30.0
JPEG_QUALITY = 90
INFO = {"description": "TextOCR v0.1 miniature (benchsmith sample)", "version": "0.1"}


def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size)  # type: ignore[return-value]


def _corners(x: float, y: float, w: float, h: float) -> list[float]:
    return [x, y, x + w, y, x + w, y + h, x, y + h]


def _rotated(points: list[float], cx: float, cy: float, degrees: float) -> list[float]:
    angle = np.deg2rad(degrees)
    cos, sin = float(np.cos(angle)), float(np.sin(angle))
    out = []
    for px, py in zip(points[::2], points[1::2], strict=True):
        dx, dy = px - cx, py - cy
        out += [round(cx + dx * cos + dy * sin, 2), round(cy - dx * sin + dy * cos, 2)]
    return out


def _box_of(points: list[float]) -> list[float]:
    xs, ys = points[::2], points[1::2]
    return [round(min(xs), 2), round(min(ys), 2), round(max(xs) - min(xs), 2),
            round(max(ys) - min(ys), 2)]  # fmt: skip


class _Canvas:
    """One image being drawn, with the boxes already taken (words never overlap)."""

    def __init__(self, rng: np.random.Generator, width: int, height: int) -> None:
        self.rng, self.width, self.height = rng, width, height
        shade = [int(v) for v in rng.integers(170, 235, size=3)]
        self.image = Image.new("RGB", (width, height), tuple(shade))
        self.draw = ImageDraw.Draw(self.image)
        self.taken: list[tuple[float, float, float, float]] = []

    def _place(self, w: float, h: float) -> tuple[int, int] | None:
        for _ in range(200):
            x = int(self.rng.integers(4, max(5, self.width - int(w) - 4)))
            y = int(self.rng.integers(4, max(5, self.height - int(h) - 4)))
            box = (x - 3, y - 3, x + w + 3, y + h + 3)
            if (
                x + w <= self.width - 2
                and y + h <= self.height - 2
                and not any(
                    box[0] < t[2] and t[0] < box[2] and box[1] < t[3] and t[1] < box[3]
                    for t in self.taken
                )
            ):
                self.taken.append(box)
                return x, y
        return None

    def word(self, text: str, size: int) -> tuple[list[float], list[float]] | None:
        """Draw an upright word; (bbox, points) of its drawn extent."""
        font = _font(size)
        left, top, right, bottom = self.draw.textbbox((0, 0), text, font=font)
        spot = self._place(right - left, bottom - top)
        if spot is None:
            return None
        x, y = spot
        ink = tuple(int(v) for v in self.rng.integers(0, 70, size=3))
        self.draw.text((x - left, y - top), text, font=font, fill=ink)
        box = [float(x), float(y), float(right - left), float(bottom - top)]
        return box, _corners(*box)

    def rotated_word(self, text: str, size: int) -> tuple[list[float], list[float]] | None:
        """Draw a word turned by ROTATION_DEG; its box is the turned rectangle's extent."""
        font = _font(size)
        left, top, right, bottom = ImageDraw.Draw(Image.new("L", (1, 1))).textbbox(
            (0, 0), text, font=font
        )
        w, h = right - left, bottom - top
        patch = Image.new("L", (w, h), 0)
        ImageDraw.Draw(patch).text((-left, -top), text, font=font, fill=255)
        turned = patch.rotate(ROTATION_DEG, expand=True, resample=Image.Resampling.NEAREST)
        spot = self._place(turned.width, turned.height)
        if spot is None:
            return None
        x, y = spot
        self.image.paste((20, 20, 90), (x, y), turned)
        cx, cy = x + turned.width / 2, y + turned.height / 2
        points = _rotated(_corners(cx - w / 2, cy - h / 2, w, h), cx, cy, ROTATION_DEG)
        return _box_of(points), points

    def scribble(self, w: int, h: int) -> tuple[list[float], list[float]] | None:
        """An illegible mark (TextOCR transcribes such a word as ".")."""
        spot = self._place(w, h)
        if spot is None:
            return None
        x, y = spot
        xs = np.linspace(x, x + w, 12)
        ys = y + h / 2 + self.rng.uniform(-h / 2, h / 2, size=12)
        self.draw.line([(float(a), float(b)) for a, b in zip(xs, ys, strict=True)],
                       fill=(60, 60, 60), width=3)  # fmt: skip
        box = [float(x), float(y), float(w), float(h)]
        return box, _corners(*box)

    def jpeg(self) -> bytes:
        buffer = io.BytesIO()
        self.image.save(buffer, "JPEG", quality=JPEG_QUALITY)
        return buffer.getvalue()


def _plan(k: int, count: int) -> list[tuple[str, int]]:
    """The words of image ``k`` as (kind, font size), largest first."""
    if k == count - 1 and count > 2:
        return [("rotated", 40), ("illegible", 36)]
    if k == 0:
        return [("rotated", 44), ("word", 30), ("word", 18), ("illegible", 16)]
    if k == 1:
        return [("illegible", 60), ("word", 28), ("word", 16)]
    return [("word", 36 - 2 * (k % 5)), ("word", 22), ("word", 14), ("illegible", 14)]


def sample_split(split: str, count: int, seed: int = 0) -> tuple[dict, dict[str, bytes]]:
    """The annotation document of ``split`` and its images (``file name -> JPEG bytes``)."""
    if count < 1:
        raise BenchsmithError(f"the TextOCR sample needs at least 1 {split} image, got {count}")
    imgs, anns, index, files = {}, {}, {}, {}
    for k in range(count):
        rng = derived_rng(seed, "textocr-sample", split, k)
        image_id = "".join(f"{int(v):x}" for v in rng.integers(0, 16, size=16))
        width, height = SIZES[k % len(SIZES)]
        canvas = _Canvas(rng, width, height)
        index[image_id] = []
        texts = [WORDS[int(i)] for i in rng.permutation(len(WORDS))]  # distinct in an image
        for n, (kind, size) in enumerate(_plan(k, count), start=1):
            text = texts[n - 1]
            if kind == "illegible":
                drawn, text = canvas.scribble(size * 2, size // 2 + 4), ILLEGIBLE
            elif kind == "rotated":
                drawn = canvas.rotated_word(text, size)
            else:
                drawn = canvas.word(text, size)
            if drawn is None:
                continue
            box, points = drawn
            ann_id = f"{image_id}_{n}"
            anns[ann_id] = {"id": ann_id, "image_id": image_id, "bbox": box, "utf8_string": text,
                            "points": points, "area": round(box[2] * box[3], 2)}  # fmt: skip
            index[image_id].append(ann_id)
        imgs[image_id] = {"id": image_id, "width": width, "height": height, "set": split,
                          "file_name": f"train/{image_id}.jpg"}  # fmt: skip
        files[f"{image_id}.jpg"] = canvas.jpeg()
    document = {"info": INFO, "imgs": imgs, "anns": anns, "imgToAnns": index}
    return document, files


def write_sample_textocr(
    root: str | Path, *, n_train: int = 12, n_val: int = 6, seed: int = 0
) -> Path:
    """Write ``root/TextOCR/`` atomically; returns that folder."""
    textocr_root = Path(root) / TEXTOCR_DIRNAME
    with atomic_directory(textocr_root) as staging:
        images = staging / IMAGES_DIRNAME
        images.mkdir()
        for split, count in zip(SPLITS, (n_train, n_val), strict=True):
            document, files = sample_split(split, count, seed)
            for name, data in files.items():
                if (images / name).exists():
                    raise BenchsmithError(f"TextOCR sample: image id {name} drawn twice")
                (images / name).write_bytes(data)
            annotations_path(staging, split).write_text(json.dumps(document), encoding="utf-8")
    return textocr_root
