"""Write a miniature MiniImageNet in the Ravi-Larochelle layout (sample mode).

Real ImageNet images cannot ship with the project, so each fake class (wnid ``n9xxxxxxx``) is a
solid colour plus a class-specific glyph. The colour alone separates classes (hues evenly spaced)
and the glyph makes them separable by shape too, so a probe model or a test can tell classes
apart. Within a class every image gets its own low-frequency shading (a random 4x4 field of
brightness offsets, smoothly upsampled), the glyph is shifted a few pixels and light noise is
added, so no two images are pixel-identical *or* perceptual-hash near duplicates: the
near-duplicate leakage checks must not fire on the sample.
"""

from __future__ import annotations

import colorsys
import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from benchsmith.core.atomic import atomic_directory
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.rng import derived_rng
from benchsmith.sources.miniimagenet.class_names import SYNSET_FILE, write_synset_names
from benchsmith.sources.miniimagenet.reader import CSV_HEADER, IMAGES_DIRNAME, LAYOUTS, SPLITS

DEFAULT_CLASSES_PER_SPLIT = {"train": 4, "val": 2, "test": 6}
JPEG_QUALITY = 90
NOISE_SIGMA = 4.0
SHADING = 70.0  # +- grey levels of the per-image low-frequency shading
MAX_SHIFT = 4  # pixels (at 84 px; scaled with the image size)
MAX_SOURCE_INDEX = 1300  # ImageNet has at most ~1300 training images per class


@dataclass(frozen=True)
class SampleClass:
    wnid: str
    split: str
    color: tuple[int, int, int]
    glyph: str
    indices: tuple[int, ...]  # the 8-digit image indices, ascending

    def filename(self, index: int) -> str:
        return f"{self.wnid}{index:08d}.jpg"


def sample_wnids(count: int, seed: int = 0) -> list[str]:
    """Distinct fake wnids ``n9xxxxxxx`` (real wnids start with n0/n1, so no clash)."""
    rng = np.random.default_rng(seed)
    return [f"n9{int(v):07d}" for v in rng.choice(10**7, size=count, replace=False)]


def sample_classes(
    classes_per_split: dict[str, int], images_per_class: int, seed: int = 0
) -> list[SampleClass]:
    """The classes of the miniature in CSV order (train, val, test)."""
    unknown = set(classes_per_split) - set(SPLITS)
    if unknown or any(n < 0 for n in classes_per_split.values()):
        raise BenchsmithError(
            f"classes_per_split must map {SPLITS} to counts >= 0, got {classes_per_split}",
            fix="fix the MiniImageNet sample settings in params.yaml",
        )
    if not 1 <= images_per_class <= MAX_SOURCE_INDEX:
        raise BenchsmithError(
            f"images_per_class must be between 1 and {MAX_SOURCE_INDEX}, got {images_per_class}",
            fix="fix the MiniImageNet sample settings in params.yaml",
        )
    total = sum(classes_per_split.get(split, 0) for split in SPLITS)
    wnids = sample_wnids(total, seed)
    rng = np.random.default_rng([seed, 1])
    classes = []
    k = 0
    for split in SPLITS:
        for _ in range(classes_per_split.get(split, 0)):
            picks = rng.choice(MAX_SOURCE_INDEX, size=images_per_class, replace=False) + 1
            classes.append(
                SampleClass(
                    wnid=wnids[k],
                    split=split,
                    color=_class_color(k, total),
                    glyph=GLYPH_NAMES[k % len(GLYPH_NAMES)],
                    indices=tuple(sorted(int(i) for i in picks)),
                )
            )
            k += 1
    return classes


def _class_color(k: int, total: int) -> tuple[int, int, int]:
    """Hues evenly spaced; two brightness levels alternate so neighbours differ more."""
    value = 0.85 if k % 2 == 0 else 0.6
    r, g, b = colorsys.hsv_to_rgb(k / max(total, 1), 0.75, value)
    return (round(r * 255), round(g * 255), round(b * 255))


def _glyph_color(color: tuple[int, int, int]) -> tuple[int, int, int]:
    luminance = 0.299 * color[0] + 0.587 * color[1] + 0.114 * color[2]
    return (20, 20, 20) if luminance > 130 else (245, 245, 245)


Box = tuple[float, float, float, float]


def _star(draw: ImageDraw.ImageDraw, box: Box, fill: tuple[int, int, int]) -> None:
    x0, y0, x1, y1 = box
    cx, cy, r = (x0 + x1) / 2, (y0 + y1) / 2, (x1 - x0) / 2
    points = []
    for i in range(10):
        radius = r if i % 2 == 0 else r * 0.45
        angle = np.pi / 2 + i * np.pi / 5
        points.append((cx + radius * np.cos(angle), cy - radius * np.sin(angle)))
    draw.polygon(points, fill=fill)


def _bars(vertical: bool) -> Callable[[ImageDraw.ImageDraw, Box, tuple[int, int, int]], None]:
    def draw_bars(draw: ImageDraw.ImageDraw, box: Box, fill: tuple[int, int, int]) -> None:
        x0, y0, x1, y1 = box
        step = (x1 - x0) / 5
        for i in (0, 2, 4):
            if vertical:
                draw.rectangle((x0 + i * step, y0, x0 + (i + 1) * step, y1), fill=fill)
            else:
                draw.rectangle((x0, y0 + i * step, x1, y0 + (i + 1) * step), fill=fill)

    return draw_bars


def _cross(diagonal: bool) -> Callable[[ImageDraw.ImageDraw, Box, tuple[int, int, int]], None]:
    def draw_cross(draw: ImageDraw.ImageDraw, box: Box, fill: tuple[int, int, int]) -> None:
        x0, y0, x1, y1 = box
        width = max(2, round((x1 - x0) / 5))
        if diagonal:
            draw.line((x0, y0, x1, y1), fill=fill, width=width)
            draw.line((x0, y1, x1, y0), fill=fill, width=width)
        else:
            cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
            draw.line((cx, y0, cx, y1), fill=fill, width=width)
            draw.line((x0, cy, x1, cy), fill=fill, width=width)

    return draw_cross


GLYPHS: dict[str, Callable[[ImageDraw.ImageDraw, Box, tuple[int, int, int]], None]] = {
    "disc": lambda d, b, f: d.ellipse(b, fill=f),
    "square": lambda d, b, f: d.rectangle(b, fill=f),
    "triangle": lambda d, b, f: d.polygon(
        [((b[0] + b[2]) / 2, b[1]), (b[2], b[3]), (b[0], b[3])], fill=f
    ),
    "plus": _cross(diagonal=False),
    "diamond": lambda d, b, f: d.polygon(
        [
            ((b[0] + b[2]) / 2, b[1]),
            (b[2], (b[1] + b[3]) / 2),
            ((b[0] + b[2]) / 2, b[3]),
            (b[0], (b[1] + b[3]) / 2),
        ],
        fill=f,
    ),
    "ring": lambda d, b, f: d.ellipse(b, outline=f, width=max(2, round((b[2] - b[0]) / 7))),
    "hbars": _bars(vertical=False),
    "vbars": _bars(vertical=True),
    "x": _cross(diagonal=True),
    "star": _star,
    "frame": lambda d, b, f: d.rectangle(b, outline=f, width=max(2, round((b[2] - b[0]) / 7))),
    "half": lambda d, b, f: d.pieslice(b, 180, 360, fill=f),
}
GLYPH_NAMES = tuple(GLYPHS)


def render_sample_image(cls: SampleClass, index: int, size: int, seed: int) -> bytes:
    """One JPEG (quality 90): class colour, class glyph shifted a little, light noise."""
    rng = derived_rng(seed, "miniimagenet-sample", cls.wnid, index)
    image = Image.new("RGB", (size, size), cls.color)
    shift = max(1, round(MAX_SHIFT * size / 84))
    dx, dy = (int(v) for v in rng.integers(-shift, shift + 1, size=2))
    half = size * 0.28
    centre = size / 2
    box = (centre - half + dx, centre - half + dy, centre + half + dx, centre + half + dy)
    GLYPHS[cls.glyph](ImageDraw.Draw(image), box, _glyph_color(cls.color))
    pixels = np.asarray(image, dtype=np.float32)
    coarse = rng.uniform(-SHADING, SHADING, size=(4, 4)).astype(np.float32)
    shading = np.asarray(
        Image.fromarray(coarse, mode="F").resize((size, size), Image.Resampling.BICUBIC)
    )
    pixels += shading[:, :, None]
    pixels += rng.normal(0.0, NOISE_SIGMA, size=pixels.shape)
    noisy = Image.fromarray(np.clip(np.rint(pixels), 0, 255).astype(np.uint8), "RGB")
    buffer = io.BytesIO()
    noisy.save(buffer, "JPEG", quality=JPEG_QUALITY)
    return buffer.getvalue()


GLYPH_WORDS = {"disc": "disc", "square": "square", "triangle": "triangle", "plus": "plus sign",
               "diamond": "diamond", "ring": "ring", "hbars": "horizontal stripes",
               "vbars": "vertical stripes", "x": "x", "star": "star", "frame": "square outline",
               "half": "half disc"}  # fmt: skip
HUE_WORDS = ((15, "red"), (45, "orange"), (70, "yellow"), (160, "green"), (200, "cyan"),
             (250, "blue"), (290, "purple"), (345, "magenta"), (361, "red"))  # fmt: skip


def sample_class_name(cls: SampleClass) -> str:
    """What an invented class shows, in words a judge can check ("star on blue"): its glyph
    and the colour word of its ground's hue."""
    hue, _, _ = colorsys.rgb_to_hsv(*(c / 255 for c in cls.color))
    colour = next(word for limit, word in HUE_WORDS if hue * 360 < limit)
    return f"{GLYPH_WORDS[cls.glyph]} on {colour}"


def write_sample_miniimagenet(
    root: str | Path,
    *,
    classes_per_split: dict[str, int] | None = None,
    images_per_class: int = 8,
    size: int = 84,
    layout: str = "flat",
    seed: int = 0,
) -> Path:
    """Write ``root/{train,val,test}.csv`` and ``root/images/`` (flat or per-class); atomic.

    Defaults (train 4 / val 2 / test 6 classes x 8 images) cover the VL-ICL sample profile:
    ``open_mi`` needs 5 test classes with >= 6 images, ``matching_mi`` >= 2 train and >= 2
    test classes. Same arguments give the same bytes.
    """
    if layout not in LAYOUTS:
        raise BenchsmithError(f"layout must be one of {LAYOUTS}, got {layout!r}")
    if size < 16:
        raise BenchsmithError(f"size must be at least 16 pixels, got {size}")
    counts = dict(DEFAULT_CLASSES_PER_SPLIT if classes_per_split is None else classes_per_split)
    classes = sample_classes(counts, images_per_class, seed)
    root = Path(root)
    with atomic_directory(root) as staging:
        images_dir = staging / IMAGES_DIRNAME
        images_dir.mkdir()
        rows: dict[str, list[tuple[str, str]]] = {split: [] for split in SPLITS}
        for cls in classes:
            folder = images_dir if layout == "flat" else images_dir / cls.wnid
            folder.mkdir(exist_ok=True)
            for index in cls.indices:
                name = cls.filename(index)
                (folder / name).write_bytes(render_sample_image(cls, index, size, seed))
                rows[cls.split].append((name, cls.wnid))
        write_synset_names(staging / SYNSET_FILE, {c.wnid: sample_class_name(c) for c in classes})
        for split in SPLITS:
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            writer.writerow(CSV_HEADER)
            writer.writerows(rows[split])
            (staging / f"{split}.csv").write_text(buffer.getvalue(), encoding="utf-8")
    return root
