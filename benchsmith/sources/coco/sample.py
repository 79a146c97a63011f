"""Write a miniature COCO 2014 val in the real format (sample mode).

The sample is what makes ``dvc repro`` and the tests run offline in seconds, so it carries the
quirks of the real file on purpose: ``images[]`` not sorted, 2-5 captions per image interleaved
in ``annotations[]``, captions with stray whitespace and newlines, one caption shared by two
images, grayscale JPEGs, several sizes, and a stray non-image file in ``val2014/``.

Each image is a small scene (:mod:`.sample_scenes`): shapes in named colours on textured ground
under a plain sky, with captions that describe it, so a needle can be found by eye. The sky is
a colour from a 10-level-per-channel grid (25 levels apart), so the mean colour of the top
quarter of a stitched cell identifies its source image after JPEG compression; tests use this
to check geometry (row = y, col = x) and labels. A few pictures are planted under a second
image id (:data:`PLANTED_DUPLICATES`): one with identical pixels, the others re-encoded (near
duplicates), as COCO itself holds some; the image checks must find exactly those.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from benchsmith.core.atomic import atomic_directory
from benchsmith.core.errors import BenchsmithError
from benchsmith.sources.coco.reader import CAPTIONS_RELPATH, IMAGES_DIRNAME
from benchsmith.sources.coco.sample_scenes import Scene, describe_scene, distinct_scenes, draw_scene

COCO_LICENSES = [
    (
        1,
        "Attribution-NonCommercial-ShareAlike License",
        "http://creativecommons.org/licenses/by-nc-sa/2.0/",
    ),
    (2, "Attribution-NonCommercial License", "http://creativecommons.org/licenses/by-nc/2.0/"),
    (
        3,
        "Attribution-NonCommercial-NoDerivs License",
        "http://creativecommons.org/licenses/by-nc-nd/2.0/",
    ),
    (4, "Attribution License", "http://creativecommons.org/licenses/by/2.0/"),
    (5, "Attribution-ShareAlike License", "http://creativecommons.org/licenses/by-sa/2.0/"),
    (6, "Attribution-NoDerivs License", "http://creativecommons.org/licenses/by-nd/2.0/"),
    (7, "No known copyright restrictions", "http://flickr.com/commons/usage/"),
    (8, "United States Government Work", "http://www.usa.gov/copyright.shtml"),
]
SIZES = [(64, 48), (48, 64), (50, 50), (80, 60), (60, 80), (72, 54), (40, 40)]
LEVELS = [12 + 25 * i for i in range(10)]  # 12..237, 25 apart
GRAY_EVERY = 80  # every 80th image is grayscale (at most 10 gray levels stay distinguishable)
# (copy's index in images[], original's index, kind): the same picture under a second id
PLANTED_DUPLICATES = ((7, 2, "exact"), (11, 5, "near"), (45, 30, "near"), (120, 99, "near"))
NEAR_COPY_QUALITY = 70  # a near duplicate is the original scene re-encoded at this quality


@dataclass(frozen=True)
class SampleImageSpec:
    image_id: int
    file_name: str
    size: tuple[int, int]
    mode: str
    color: tuple[int, int, int]  # the sky
    scene: Scene
    copy_of: int | None = None  # image id of the original, for a planted duplicate
    copy_kind: str | None = None  # "exact" (same pixels) or "near" (re-encoded)


def sample_image_specs(n_images: int, seed: int = 0) -> list[SampleImageSpec]:
    """The images of the miniature, in ``images[]`` order (deliberately not sorted by id)."""
    if n_images < 1 or n_images > 990:
        raise BenchsmithError(
            f"n_images must be between 1 and 990, got {n_images}", fix="set coco.sample.n_images"
        )
    rng = np.random.default_rng(seed)
    ids = (rng.choice(581_000, size=n_images, replace=False) + 1).tolist()
    gray_levels = iter(LEVELS)
    rgb_grid = [(r, g, b) for r in LEVELS for g in LEVELS for b in LEVELS if not (r == g == b)]
    order = rng.permutation(len(rgb_grid))
    scenes = distinct_scenes(n_images, np.random.default_rng([seed, 2]))
    specs = []
    for k, image_id in enumerate(ids):
        gray = k % GRAY_EVERY == 3 and k // GRAY_EVERY < len(LEVELS)
        if gray:
            level = next(gray_levels)
            color = (level, level, level)
        else:
            color = rgb_grid[int(order[k])]
        specs.append(
            SampleImageSpec(
                image_id=int(image_id),
                file_name=f"COCO_val2014_{int(image_id):012d}.jpg",
                size=SIZES[k % len(SIZES)],
                mode="L" if gray else "RGB",
                color=color,
                scene=scenes[k],
            )
        )
    for copy, original, kind in PLANTED_DUPLICATES:
        if copy < n_images:
            source = specs[original]
            specs[copy] = replace(
                source,
                image_id=specs[copy].image_id,
                file_name=specs[copy].file_name,
                copy_of=source.image_id,
                copy_kind=kind,
            )
    return specs


def encode_sample_image(spec: SampleImageSpec) -> bytes:
    """The JPEG of one image: its scene (in grey for an "L" image), quality 95; a near
    duplicate is the same scene at quality :data:`NEAR_COPY_QUALITY`."""
    image = draw_scene(spec.scene, spec.size, spec.color)
    if spec.mode == "L":
        image = image.convert("L")
    buffer = io.BytesIO()
    quality = NEAR_COPY_QUALITY if spec.copy_kind == "near" else 95
    image.save(buffer, "JPEG", quality=quality)
    return buffer.getvalue()


def _captions_for(spec: SampleImageSpec, rng: np.random.Generator) -> list[str]:
    """2-5 of the scene's descriptions, in a random order (COCO has 5 per image, some fewer)."""
    descriptions = describe_scene(spec.scene, grey=spec.mode == "L")
    count = int(rng.integers(2, 6))
    return [descriptions[int(i)] for i in rng.permutation(len(descriptions))[:count]]


def build_captions_json(specs: list[SampleImageSpec], seed: int = 0) -> dict:
    """The ``captions_val2014.json`` object for the given images."""
    rng = np.random.default_rng(seed + 1)
    images = []
    pending: list[tuple[int, str]] = []
    for k, spec in enumerate(specs):
        width, height = spec.size
        images.append(
            {
                "license": COCO_LICENSES[k % len(COCO_LICENSES)][0],
                "file_name": spec.file_name,
                "coco_url": f"http://images.cocodataset.org/val2014/{spec.file_name}",
                "height": height,
                "width": width,
                "date_captured": f"2013-11-{1 + k % 28:02d} 12:{k % 60:02d}:00",
                "flickr_url": f"http://farm{1 + k % 9}.staticflickr.com/{1000 + k}/{spec.image_id}_sample.jpg",
                "id": spec.image_id,
            }
        )
        captions = _captions_for(spec, rng)
        if k % 9 == 0:
            captions[-1] = captions[-1] + "  "  # trailing whitespace
        if k % 13 == 1:
            captions[0] = " " + captions[0].replace(", ", ",\n", 1)  # leading space + newline
        pending.extend((spec.image_id, caption) for caption in captions)
    if len(specs) >= 2:  # one caption shared verbatim by two images (last-listed for both)
        shared = "A simple picture of shapes under a plain sky."
        pending.append((specs[0].image_id, shared))
        pending.append((specs[1].image_id, shared + " "))
    body = pending[:-2] if len(specs) >= 2 else pending
    order = rng.permutation(len(body)).tolist()  # interleave captions of different images
    shuffled = [body[i] for i in order]
    tail = pending[-2:] if len(specs) >= 2 else []
    ann_ids = (rng.choice(900_000, size=len(pending), replace=False) + 1).tolist()
    annotations = [
        {"image_id": image_id, "id": int(ann_id), "caption": caption}
        for (image_id, caption), ann_id in zip(shuffled + tail, ann_ids, strict=True)
    ]
    return {
        "info": {
            "description": "benchsmith miniature of COCO 2014 val captions (sample mode, synthetic)",
            "url": "http://cocodataset.org",
            "version": "1.0",
            "year": 2014,
            "contributor": "benchsmith",
            "date_created": "2015-01-27 09:11:52.357475",
        },
        "images": images,
        "licenses": [{"url": url, "id": lid, "name": name} for lid, name, url in COCO_LICENSES],
        "type": "captions",
        "annotations": annotations,
    }


def write_sample_coco(out_dir: str | Path, n_images: int = 660, seed: int = 0) -> Path:
    """Write ``out_dir/annotations/captions_val2014.json`` and ``out_dir/val2014/*.jpg``.

    The whole folder is written to a staging directory and swapped in at the end.
    """
    specs = sample_image_specs(n_images, seed)
    captions = build_captions_json(specs, seed)
    out_dir = Path(out_dir)
    with atomic_directory(out_dir) as staging:
        images_dir = staging / IMAGES_DIRNAME
        images_dir.mkdir()
        for spec in specs:
            (images_dir / spec.file_name).write_bytes(encode_sample_image(spec))
        (images_dir / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")  # listing must ignore it
        (staging / CAPTIONS_RELPATH).parent.mkdir()
        (staging / CAPTIONS_RELPATH).write_text(json.dumps(captions), encoding="utf-8")
    return out_dir
