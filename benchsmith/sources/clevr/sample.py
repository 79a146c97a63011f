"""Write a miniature CLEVR v1.0 in the real layout (sample mode).

Scenes JSON carries the real keys (``info``; per scene ``split``, ``image_index``,
``image_filename``, ``objects`` with ``color/size/shape/material/3d_coords/pixel_coords/
rotation``, ``relationships`` with ``left/right/front/behind``, ``directions``), so the same
reader serves the sample and the real files. Images are flat 2-D stand-ins for the Blender
renders: each object is drawn at ``pixel_coords[:2]`` in its CLEVR colour as a circle
(sphere), square (cube) or tall rectangle (cylinder), 40 px when large and 20 px when small,
filled when metal and outlined when rubber. Objects never overlap and are drawn without
anti-aliasing, so a test can count them and read their colours back from the PNG.

Coverage is guaranteed, not left to chance: the first objects of each split cycle through every
colour, shape and material, and scene 0 of each split has only large objects, so at least one
(attribute, value) pair has count 0 there.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from benchsmith.core.atomic import atomic_directory
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.rng import derived_rng
from benchsmith.sources.clevr.reader import CLEVR_DIRNAME, CLEVR_VOCAB, images_dir, scenes_path

WIDTH, HEIGHT = 480, 320
BACKGROUND = (190, 190, 190, 255)
SIZE_PX = {"large": 40, "small": 20}
OUTLINE_PX = 3  # rubber objects are outlines this wide
GAP_PX = 6  # minimum gap between two objects' boxes
MARGIN_PX = 8
# CLEVR's own colour table (clevr-dataset-gen properties.json), RGB 0-255.
COLOR_RGB = {
    "gray": (87, 87, 87),
    "red": (173, 35, 35),
    "blue": (42, 75, 215),
    "green": (29, 105, 20),
    "brown": (129, 74, 25),
    "purple": (129, 38, 192),
    "cyan": (41, 208, 208),
    "yellow": (255, 238, 51),
}
DIRECTIONS = {
    "left": [-1.0, 0.0, 0.0],
    "right": [1.0, 0.0, 0.0],
    "front": [0.0, 1.0, 0.0],
    "behind": [0.0, -1.0, 0.0],
    "above": [0.0, 0.0, 1.0],
    "below": [0.0, 0.0, -1.0],
}
INFO = {
    "split": None,  # filled per split
    "version": "1.0",
    "date": "2/14/2017",
    "license": "Creative Commons Attribution (CC BY 4.0)",
}
MIN_OBJECTS, MAX_OBJECTS = 3, 6


def shape_box(shape: str, size: str, x: float, y: float) -> tuple[int, int, int, int]:
    """Pixel box (x0, y0, x1, y1), inclusive, of an object drawn centred at (x, y)."""
    side = SIZE_PX[size]
    width = round(side * 0.6) if shape == "cylinder" else side
    x0, y0 = round(x - width / 2), round(y - side / 2)
    return x0, y0, x0 + width - 1, y0 + side - 1


def _attributes(
    rng: np.random.Generator, scene_index: int, objects_before: int, first_scene_size: int, n: int
) -> list[dict[str, str]]:
    result = []
    for j in range(n):
        g = objects_before + j  # object number within the split
        obj = {}
        for attribute in ("color", "material", "shape"):
            values = CLEVR_VOCAB[attribute]
            obj[attribute] = values[g] if g < len(values) else values[rng.integers(len(values))]
        sizes = CLEVR_VOCAB["size"]
        after_first = g - first_scene_size
        if scene_index == 0:
            obj["size"] = "large"  # scene 0: value "small" absent (count 0)
        elif after_first < len(sizes):
            obj["size"] = sizes[after_first]
        else:
            obj["size"] = sizes[rng.integers(len(sizes))]
        result.append(obj)
    return result


def _place(rng: np.random.Generator, attributes: list[dict[str, str]]) -> list[tuple[int, int]]:
    """Non-overlapping centres (rejection sampling; restarts if a scene gets crowded)."""
    for _ in range(100):
        boxes: list[tuple[int, int, int, int]] = []
        centres: list[tuple[int, int]] = []
        for obj in attributes:
            for _ in range(200):
                x = int(rng.integers(MARGIN_PX + 25, WIDTH - MARGIN_PX - 25))
                y = int(rng.integers(MARGIN_PX + 25, HEIGHT - MARGIN_PX - 25))
                box = shape_box(obj["shape"], obj["size"], x, y)
                if all(_apart(box, other) for other in boxes):
                    boxes.append(box)
                    centres.append((x, y))
                    break
            else:
                break
        if len(centres) == len(attributes):
            return centres
    raise BenchsmithError("could not place the CLEVR sample objects without overlap")


def _apart(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return (
        a[2] + GAP_PX < b[0] or b[2] + GAP_PX < a[0] or a[3] + GAP_PX < b[1] or b[3] + GAP_PX < a[1]
    )


def _relationships(coords: list[list[float]]) -> dict[str, list[list[int]]]:
    """``relationships[rel][i]`` = objects that are ``rel`` of object i (CLEVR's convention)."""
    result = {}
    for rel in ("right", "behind", "front", "left"):
        direction = np.asarray(DIRECTIONS[rel])
        result[rel] = [
            [
                j
                for j, other in enumerate(coords)
                if j != i and float(np.dot(np.subtract(other, here), direction)) > 0
            ]
            for i, here in enumerate(coords)
        ]
    return result


def sample_scene(rng: np.random.Generator, split: str, index: int, before: int, first: int) -> dict:
    n = int(rng.integers(MIN_OBJECTS, MAX_OBJECTS + 1))
    attributes = _attributes(rng, index, before, first, n)
    centres = _place(rng, attributes)
    objects = []
    for obj, (x, y) in zip(attributes, centres, strict=True):
        height = 0.7 if obj["size"] == "large" else 0.35
        coords = [(x - WIDTH / 2) / 40.0, (y - HEIGHT / 2) / 40.0, height]
        depth = round(8.0 + (HEIGHT - y) / 32.0, 4)
        objects.append(
            {
                "color": obj["color"],
                "size": obj["size"],
                "rotation": round(float(rng.uniform(0.0, 360.0)), 4),
                "shape": obj["shape"],
                "3d_coords": coords,
                "material": obj["material"],
                "pixel_coords": [x, y, depth],
            }
        )
    return {
        "image_index": index,
        "objects": objects,
        "relationships": _relationships([obj["3d_coords"][:2] + [0.0] for obj in objects]),
        "image_filename": f"CLEVR_{split}_{index:06d}.png",
        "split": split,
        "directions": DIRECTIONS,
    }


def render_scene(scene: dict) -> bytes:
    """RGBA PNG (real CLEVR images are RGBA) without metadata; far objects drawn first."""
    image = Image.new("RGBA", (WIDTH, HEIGHT), BACKGROUND)
    draw = ImageDraw.Draw(image)
    for obj in sorted(scene["objects"], key=lambda o: o["pixel_coords"][1]):
        x, y = obj["pixel_coords"][:2]
        box = shape_box(obj["shape"], obj["size"], x, y)
        color = (*COLOR_RGB[obj["color"]], 255)
        filled = obj["material"] == "metal"
        if obj["shape"] == "sphere":
            if filled:
                draw.ellipse(box, fill=color)
            else:
                draw.ellipse(box, outline=color, width=OUTLINE_PX)
        elif filled:
            draw.rectangle(box, fill=color)
        else:
            draw.rectangle(box, outline=color, width=OUTLINE_PX)
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return buffer.getvalue()


def sample_scenes(split: str, count: int, seed: int = 0) -> list[dict]:
    if count < 1:
        raise BenchsmithError(f"the CLEVR sample needs at least 1 {split} scene, got {count}")
    rng = derived_rng(seed, "clevr-sample", split)
    scenes: list[dict] = []
    before = 0
    for index in range(count):
        first = len(scenes[0]["objects"]) if scenes else 0
        scenes.append(sample_scene(rng, split, index, before, first))
        before += len(scenes[-1]["objects"])
    return scenes


def write_sample_clevr(
    root: str | Path, *, n_train: int = 24, n_val: int = 12, seed: int = 0
) -> Path:
    """Write ``root/CLEVR_v1.0/{images,scenes}`` atomically; returns the ``CLEVR_v1.0`` folder."""
    clevr_root = Path(root) / CLEVR_DIRNAME
    with atomic_directory(clevr_root) as staging:
        for split, count in (("train", n_train), ("val", n_val)):
            scenes = sample_scenes(split, count, seed)
            folder = images_dir(staging, split)
            folder.mkdir(parents=True)
            for scene in scenes:
                (folder / scene["image_filename"]).write_bytes(render_scene(scene))
            path = scenes_path(staging, split)
            path.parent.mkdir(exist_ok=True)
            document = {"info": {**INFO, "split": split}, "scenes": scenes}
            path.write_text(json.dumps(document), encoding="utf-8")
    return clevr_root
