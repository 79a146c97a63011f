"""Every MMIU image as a *reference* that re-renders to the same bytes.

An item's images are not copied at build time: each is a reference (``kind`` plus the source
frame or file and the render parameters) that :func:`render_image` turns into bytes, at
publish, at audit and when a reference-only dataset is rehydrated from the user's own
ScanNet copy. The kinds:

- ``scannet_color``: a ``.sens`` frame's colour JPEG, exactly as stored;
- ``scannet_depth``: a frame's depth as an 8-bit grey PNG, nearer is brighter, 0 (no depth)
  black, on one fixed scale (0 to ``max_m`` metres) for every depth image of a build, so
  candidates differ only in content;
- ``scannet_marked``: a colour frame as PNG with labelled points drawn on it;
- ``coco_piece``: one cell of a COCO image cut into a grid, as PNG stored without compression
  (all pieces of an image are the same size in bytes, so file size tells nothing);
- ``coco_transformed``: a square crop of a COCO image mirrored, rotated and scaled about its
  centre, as PNG (the identity transform gives the untransformed image);
- ``release_file``: a file of the official MMIU release, as it is (ingest mode; ``scannet``
  in its params marks the ScanNet-derived ones).

Colour frames stay JPEG (their bytes are the source's); everything rendered is PNG, so every
option of an item has one encoding. A reference carries the sha256 of the bytes it renders
to; re-rendering checks it.
"""

from __future__ import annotations

import io
import json
import math
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw

from benchsmith.core.errors import SourceError
from benchsmith.core.hashing import sha256_bytes

SCANNET_KINDS = ("scannet_color", "scannet_depth", "scannet_marked")
COCO_KINDS = ("coco_piece", "coco_transformed")
MARK_COLOURS = {"REF": (255, 40, 40), "default": (255, 230, 0)}


def image_ref(kind: str, *, scene: str = "", frame: int = -1, file: str = "", **params: Any):
    """A reference without its sha256 (:func:`with_sha256` adds it once rendered)."""
    return {
        "kind": kind,
        "scene": scene,
        "frame": int(frame),
        "file": file,
        "params": json.dumps(params, sort_keys=True, separators=(",", ":")),
    }


def ref_params(ref: dict[str, Any]) -> dict[str, Any]:
    return json.loads(ref.get("params") or "{}")


def ref_extension(ref: dict[str, Any]) -> str:
    if ref["kind"] == "release_file":
        return Path(ref["file"]).suffix.lstrip(".").lower()
    return "jpg" if ref["kind"] == "scannet_color" else "png"


def is_scannet(ref: dict[str, Any]) -> bool:
    """Whether an image is ScanNet data (kept as a reference in licence-safe publishing)."""
    return ref["kind"] in SCANNET_KINDS or bool(ref_params(ref).get("scannet"))


def describe_ref(ref: dict[str, Any]) -> str:
    where = f"{ref['scene']} frame {ref['frame']}" if ref["scene"] else ref["file"]
    return f"{ref['kind']} of {where}"


@dataclass
class ImageSources:
    """Opens the sources that images are rendered from; keeps a few ``.sens`` streams open.

    ``scannet`` is the ScanNet root (``scans/`` inside), ``coco_images`` the ``val2014``
    folder. Either may be None when no image of that source is asked for.
    """

    scannet: Path | None = None
    coco_images: Path | None = None
    release: Path | None = None
    open_limit: int = 8
    _readers: OrderedDict = field(default_factory=OrderedDict)
    _depth_cache: OrderedDict = field(default_factory=OrderedDict)
    _indexes: dict = field(default_factory=dict)  # scene -> SensIndex read by a worker

    def adopt_index(self, scene: str, index: Any) -> None:
        """Open ``scene``'s stream with this index (:class:`SensIndex`) instead of walking it."""
        self._indexes[scene] = index

    def sens_path(self, scene: str) -> Path:
        if self.scannet is None:
            raise SourceError(
                f"an image of ScanNet scene {scene} is needed but no ScanNet folder was given",
                fix="pass --scannet DIR (the folder holding scans/)",
            )
        return self.scannet / "scans" / scene / f"{scene}.sens"

    def reader(self, scene: str):
        from benchsmith.sources.scannet.sens import SensReader

        if scene in self._readers:
            self._readers.move_to_end(scene)
            return self._readers[scene]
        path = self.sens_path(scene)
        if not path.is_file():
            raise SourceError(
                "ScanNet stream missing",
                path=path,
                fix="point --scannet at the ScanNet copy the dataset was built from",
            )
        reader = SensReader(path, index=self._indexes.get(scene))
        self._readers[scene] = reader
        while len(self._readers) > self.open_limit:
            _, old = self._readers.popitem(last=False)
            old.close()
        return reader

    def depth_m(self, scene: str, frame: int) -> np.ndarray:
        key = (scene, frame)
        if key not in self._depth_cache:
            self._depth_cache[key] = self.reader(scene).depth_metres(frame)
            while len(self._depth_cache) > 64:
                self._depth_cache.popitem(last=False)
        return self._depth_cache[key]

    def coco_path(self, file: str) -> Path:
        if self.coco_images is None:
            raise SourceError(
                f"COCO image {file} is needed but no COCO folder was given",
                fix="pass the COCO root (holding val2014/): --coco DIR, or --root coco=DIR",
            )
        return self.coco_images / file

    def release_bytes(self, file: str) -> bytes:
        if self.release is None:
            raise SourceError(
                f"release image {file} is needed but no MMIU release folder was given",
                fix="pass the release folder: --ingest-dir DIR, or --root release=DIR",
            )
        path = self.release / file
        if not path.is_file():
            raise SourceError("release image missing", path=path, fix="restore the release")
        return path.read_bytes()

    def source_path(self, ref: dict[str, Any]) -> Path | None:
        """The file or stream a reference is rendered from (for messages)."""
        if ref["scene"]:
            return self.sens_path(ref["scene"]) if self.scannet else None
        folder = self.release if ref["kind"] == "release_file" else self.coco_images
        return folder / ref["file"] if folder else None

    def coco_rgb(self, file: str) -> Image.Image:
        from benchsmith.images.decode import decode_rgb

        path = self.coco_path(file)
        if not path.is_file():
            raise SourceError("COCO image missing", path=path, fix="prepare the COCO source")
        return decode_rgb(path.read_bytes(), path)

    def close(self) -> None:
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()

    def __enter__(self) -> ImageSources:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# zlib level 1: an image is rendered again by every step that checks it (plan, shortcut gate,
# publish, audit, rehydrate), and level 1 encodes the 256-px COCO squares and the ScanNet frames
# about 4x faster than Pillow's default 6 for files about a quarter larger (same pixels).
PNG_COMPRESS_LEVEL = 1


def png_bytes(image: Image.Image, compress_level: int = PNG_COMPRESS_LEVEL) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False, compress_level=compress_level)
    return buffer.getvalue()


def depth_picture(depth_m: np.ndarray, max_m: float) -> Image.Image:
    """Depth as grey: 255 at 0 m fading to 1 at ``max_m`` and beyond, 0 where depth is 0."""
    scaled = 1.0 + 254.0 * (1.0 - np.clip(depth_m.astype(np.float64) / max_m, 0.0, 1.0))
    grey = np.where(depth_m > 0, np.rint(scaled), 0).astype(np.uint8)
    return Image.fromarray(grey, mode="L")


def draw_marks(image: Image.Image, marks: list[list[Any]]) -> Image.Image:
    """Circles with labels (``[label, x, y]`` in pixels), BLINK-style, sized to the image."""
    out = image.convert("RGB")
    draw = ImageDraw.Draw(out)
    radius = max(3, round(min(out.size) / 40))
    for label, x, y in marks:
        colour = MARK_COLOURS.get(label, MARK_COLOURS["default"])
        box = (x - radius, y - radius, x + radius, y + radius)
        draw.ellipse(box, outline=(0, 0, 0), fill=colour, width=1)
        draw.text((x + radius + 1, y - radius - 1), str(label), fill=colour, stroke_width=1,
                  stroke_fill=(0, 0, 0))  # fmt: skip
    return out


def transform_picture(image: Image.Image, side: int, flip: bool, angle: float, scale: float):
    """The centre square of ``image`` at ``side`` px, mirrored (left-right) if ``flip``, then
    rotated ``angle`` degrees counter-clockwise and scaled by ``scale`` about its centre."""
    width, height = image.size
    crop = min(width, height)
    left, top = (width - crop) // 2, (height - crop) // 2
    square = image.crop((left, top, left + crop, top + crop)).resize(
        (side, side), Image.Resampling.BICUBIC
    )
    if flip:
        square = square.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
    if angle == 0 and scale == 1:
        return square
    # output pixel -> input pixel: undo the scale, then the rotation (image y points down)
    theta = math.radians(angle)
    cos, sin = math.cos(theta) / scale, math.sin(theta) / scale
    centre = side / 2
    a, b = cos, -sin
    d, e = sin, cos
    c = centre - a * centre - b * centre
    f = centre - d * centre - e * centre
    return square.transform(
        (side, side), Image.Transform.AFFINE, (a, b, c, d, e, f), Image.Resampling.BICUBIC
    )


def render_image(ref: dict[str, Any], sources: ImageSources) -> bytes:
    """The bytes a reference stands for (deterministic for one Pillow version)."""
    kind, params = ref["kind"], ref_params(ref)
    if kind == "scannet_color":
        return sources.reader(ref["scene"]).color_bytes(ref["frame"])
    if kind == "scannet_depth":
        return png_bytes(
            depth_picture(sources.depth_m(ref["scene"], ref["frame"]), params["max_m"])
        )
    if kind == "scannet_marked":
        frame = Image.fromarray(sources.reader(ref["scene"]).color(ref["frame"]))
        return png_bytes(draw_marks(frame, params["marks"]))
    if kind == "coco_piece":
        image = sources.coco_rgb(ref["file"])
        grid, cell = params["grid"], params["cell"]
        width, height = image.size
        cw, ch = width // grid, height // grid
        row, col = divmod(cell, grid)
        # stored, not deflated: every piece of an image has one size in bytes (deflated, the
        # smooth sky pieces were the smallest files, and the two smallest were the top row)
        piece = image.crop((col * cw, row * ch, (col + 1) * cw, (row + 1) * ch))
        return png_bytes(piece, compress_level=0)
    if kind == "release_file":
        return sources.release_bytes(ref["file"])
    if kind == "coco_transformed":
        image = sources.coco_rgb(ref["file"])
        picture = transform_picture(
            image, params["side"], params["flip"], params["angle"], params["scale"]
        )
        return png_bytes(picture)
    raise SourceError(f"unknown image kind {kind!r}", fix="rebuild with this benchsmith version")


def with_sha256(ref: dict[str, Any], sources: ImageSources) -> dict[str, Any]:
    return {**ref, "sha256": sha256_bytes(render_image(ref, sources))}


def checked_render(ref: dict[str, Any], sources: ImageSources) -> bytes:
    """Render and check the recorded sha256; a mismatch names the image and the fix."""
    data = render_image(ref, sources)
    if sha256_bytes(data) != ref["sha256"]:
        raise SourceError(
            f"{describe_ref(ref)} renders to other bytes than the build recorded",
            path=sources.source_path(ref),
            fix="use the source copy the dataset was built from (same scene files, same images)",
        )
    return data
