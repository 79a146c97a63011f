"""Scenes of the miniature COCO: shapes on textured ground under a plain sky, and their captions.

A needle search can only be checked by eye when the pictures differ the way photos do and the
captions say what is in them. Each sample image is a small scene: a plain sky in the image's
own colour (:attr:`SampleImageSpec.color`, so a stitched cell still names its source by the
mean colour of its top quarter), a ground band with a pattern and low-frequency shading, and
one or two shapes in named colours, left and right. Its captions describe exactly that
("A red circle on the left and a blue square on the right, on striped green ground."), so the
caption of a needle picks out one cell a person can find. Scenes are drawn from a seeded RNG
and never repeat (the planted duplicates of :mod:`.sample` excepted), and the shading keeps
different scenes apart in perceptual hash, so the near-duplicate checks find only what was
planted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

COLOURS = {
    "red": (205, 35, 35),
    "blue": (35, 75, 210),
    "yellow": (235, 205, 35),
    "green": (35, 160, 60),
    "white": (245, 245, 245),
    "black": (20, 20, 20),
    "orange": (245, 135, 25),
    "purple": (135, 45, 165),
}
SHAPES = ("circle", "square", "triangle", "ring", "cross")
PATTERNS = ("plain", "striped", "checkered", "dotted")
SKY_FRACTION = 0.3  # the top 30% is always plain sky: nothing is drawn there
SHADING = 70.0  # +- levels of the ground's low-frequency shading


@dataclass(frozen=True)
class SceneObject:
    shape: str
    colour: str
    side: str  # "left", "right" or "middle"
    scale: float  # half-size, as a fraction of the image height
    dy: float  # vertical offset of the centre below the sky line, fraction of the height


@dataclass(frozen=True)
class Scene:
    ground: str  # colour name
    pattern: str
    horizon: float  # where the ground starts, fraction of the height (below the sky)
    objects: tuple[SceneObject, ...]
    shading: tuple[float, ...]  # 6x6 ground shading offsets

    def key(self) -> tuple:
        """What the caption says: two scenes with one key would share their captions."""
        return (self.ground, self.pattern, tuple((o.shape, o.colour, o.side) for o in self.objects))


def sample_scene(rng: np.random.Generator) -> Scene:
    """One random scene: ground colour and pattern, one shape in the middle or two apart."""
    names = list(COLOURS)
    ground = names[int(rng.integers(len(names)))]
    sides = ("middle",) if rng.random() < 0.35 else ("left", "right")
    objects = []
    for side in sides:
        colour = names[int(rng.integers(len(names)))]
        while colour == ground:
            colour = names[int(rng.integers(len(names)))]
        objects.append(
            SceneObject(
                shape=SHAPES[int(rng.integers(len(SHAPES)))],
                colour=colour,
                side=side,
                scale=float(rng.uniform(0.14, 0.22)),
                dy=float(rng.uniform(0.2, 0.4)),
            )
        )
    return Scene(
        ground=ground,
        pattern=PATTERNS[int(rng.integers(len(PATTERNS)))],
        horizon=float(rng.uniform(0.4, 0.75)),
        objects=tuple(objects),
        shading=tuple(float(v) for v in rng.uniform(-SHADING, SHADING, size=36)),
    )


def _draw_ground(image: Image.Image, scene: Scene) -> None:
    width, height = image.size
    top = round(scene.horizon * height)
    draw = ImageDraw.Draw(image)
    base = COLOURS[scene.ground]
    draw.rectangle((0, top, width, height), fill=base)
    stripe = tuple(int(v * 0.6) for v in base)
    step = max(4, height // 8)
    if scene.pattern == "striped":
        for y in range(top, height, step):
            draw.rectangle((0, y, width, y + step // 2 - 1), fill=stripe)
    elif scene.pattern == "checkered":
        for y in range(top, height, step):
            for x in range(0, width, step):
                if ((x + y - top) // step) % 2:
                    draw.rectangle((x, y, x + step - 1, y + step - 1), fill=stripe)
    elif scene.pattern == "dotted":
        for y in range(top + step // 2, height, step):
            for x in range(step // 2, width, step):
                draw.ellipse((x - 1, y - 1, x + 1, y + 1), fill=stripe)
    pixels = np.asarray(image, dtype=np.float32)
    coarse = np.asarray(scene.shading, dtype=np.float32).reshape(6, 6)
    band = np.asarray(
        Image.fromarray(coarse, mode="F").resize((width, height - top), Image.Resampling.BICUBIC)
    )
    pixels[top:] += band[:, :, None]
    image.paste(Image.fromarray(np.clip(np.rint(pixels), 0, 255).astype(np.uint8), "RGB"))


def _draw_object(draw: ImageDraw.ImageDraw, obj: SceneObject, size: tuple[int, int]) -> None:
    width, height = size
    cx = {"left": 0.28, "middle": 0.5, "right": 0.72}[obj.side] * width
    half = obj.scale * height
    cy = max(SKY_FRACTION * height + half + 1, (SKY_FRACTION + obj.dy) * height)
    cy = min(cy, height - half - 1)
    box = (cx - half, cy - half, cx + half, cy + half)
    fill = COLOURS[obj.colour]
    width_px = max(2, round(half / 3))
    if obj.shape == "circle":
        draw.ellipse(box, fill=fill)
    elif obj.shape == "square":
        draw.rectangle(box, fill=fill)
    elif obj.shape == "triangle":
        draw.polygon([(cx, box[1]), (box[2], box[3]), (box[0], box[3])], fill=fill)
    elif obj.shape == "ring":
        draw.ellipse(box, outline=fill, width=width_px)
    else:  # cross
        draw.rectangle((cx - width_px, box[1], cx + width_px, box[3]), fill=fill)
        draw.rectangle((box[0], cy - width_px, box[2], cy + width_px), fill=fill)


def draw_scene(scene: Scene, size: tuple[int, int], sky: tuple[int, int, int]) -> Image.Image:
    """The scene at ``size`` (RGB): sky above, textured ground below, shapes on it."""
    image = Image.new("RGB", size, sky)
    _draw_ground(image, scene)
    draw = ImageDraw.Draw(image)
    for obj in scene.objects:
        _draw_object(draw, obj, size)
    return image


def describe_scene(scene: Scene, grey: bool = False) -> list[str]:
    """Five true descriptions of the scene, in COCO's style (one sentence each); a ``grey``
    (black-and-white) picture is described by its shapes and patterns, not colour names."""

    def named(obj: SceneObject) -> str:
        return f"grey {obj.shape}" if grey else f"{obj.colour} {obj.shape}"

    ground_colour = "grey" if grey else scene.ground
    ground = f"{scene.pattern} {ground_colour} ground"
    if len(scene.objects) == 1:
        thing = f"a {named(scene.objects[0])}"
        placed = f"{thing} in the middle"
    else:
        left, right = scene.objects
        thing = f"a {named(left)} and a {named(right)}"
        placed = f"a {named(left)} on the left and a {named(right)} on the right"
    kind = "black and white scene" if grey else "scene"
    return [
        f"{placed[0].upper()}{placed[1:]}, on {ground}.",
        f"A picture of {thing} standing on {ground}.",
        f"{thing[0].upper()}{thing[1:]} on {ground} under a plain sky.",
        f"Shapes on {ground}: {placed}.",
        f"A simple {kind} with {thing} on {ground}.",
    ]


def distinct_scenes(count: int, rng: np.random.Generator) -> list[Scene]:
    """``count`` scenes whose captions differ (no two share :meth:`Scene.key`)."""
    scenes: list[Scene] = []
    seen: set[tuple] = set()
    while len(scenes) < count:
        scene = sample_scene(rng)
        if scene.key() not in seen:
            seen.add(scene.key())
            scenes.append(scene)
    return scenes
