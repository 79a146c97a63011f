"""TextOCR: "What text is shown in the red box?" -> the word inside the box (spec §2).

Support items come from TextOCR's ``train`` annotations and query items from ``val`` (disjoint
Open Images by construction). The release says only "one red rectangle per image around the
largest-area word, '.' and rotated words dropped", so the rest is ours, and stated:

* the word: per image, the largest box (``w * h`` from ``bbox``, never the recorded ``area``)
  among words that are legible (not TextOCR's ``"."``, not blank), **axis-aligned** (the
  polygon fills at least :data:`MIN_FILL` of its box: a word turned by more than a few degrees,
  or curved, fills less) and inside the image; ties go to the smaller annotation id. Images
  without such a word are skipped and counted, per reason;
* images: the usable ones, sorted by id, ``n`` drawn without replacement
  (``derived_rng(seed, "vlicl", "textocr/select/<split>")``), then listed by id;
* the red box: ``(255, 0, 0)``, :func:`box_width` px wide, drawn :func:`box_width` px outside
  the word's box so it never covers a letter, clipped to the image;
* the image: decoded, checked to be the size the annotation records, converted to RGB and
  written as JPEG (quality :data:`JPEG_QUALITY`, 4:4:4 so the red edge stays red, no
  metadata) to ``rendered/textocr/<image id>.jpg``. Same inputs, same bytes.
"""

from __future__ import annotations

import io
import math
from collections import Counter
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, UnidentifiedImageError, features

from benchsmith.builders.vlicl import (
    FAMILY,
    ImageHashes,
    TaskRows,
    image_ref,
    make_row,
    relative_posix,
)
from benchsmith.core.atomic import atomic_write_bytes
from benchsmith.core.errors import PlanError, SourceError
from benchsmith.core.hashing import sha256_bytes
from benchsmith.core.records import source_ref
from benchsmith.core.rng import derived_rng
from benchsmith.sources.textocr.reader import (
    ILLEGIBLE,
    IMAGES_URL,
    TEXTOCR_LICENSE,
    TEXTOCR_URL,
    TextocrImage,
    TextocrWord,
    annotations_path,
)

TASK = "textocr"
QUESTION = "What text is shown in the red box?"
SOURCE_SPLITS = {"support": "train", "query": "val"}
MIN_FILL = 0.9  # polygon area / box area below this: rotated or curved
EDGE_SLACK_PX = 2.0  # a box may overhang the image by this much (annotators' rounding)
BOX_RGB = (255, 0, 0)
JPEG_QUALITY = 95
SKIP_REASONS = ("no_words", "only_illegible", "only_rotated_or_curved", "only_outside_image")


def polygon_area(points: tuple[float, ...]) -> float:
    """Shoelace area of the polygon ``x1, y1, x2, y2, ...``."""
    xs, ys = points[::2], points[1::2]
    n = len(xs)
    return abs(sum(xs[i] * ys[(i + 1) % n] - xs[(i + 1) % n] * ys[i] for i in range(n))) / 2


def is_legible(word: TextocrWord) -> bool:
    return bool(word.text.strip()) and word.text.strip() != ILLEGIBLE


def is_axis_aligned(word: TextocrWord) -> bool:
    """The polygon fills its box: an upright rectangle fills 1.0, one turned by 10 degrees
    with a 4:1 aspect about 0.6."""
    box = word.box_area
    return len(word.points) >= 6 and box > 0 and polygon_area(word.points) >= MIN_FILL * box


def is_inside(word: TextocrWord, image: TextocrImage) -> bool:
    x, y, w, h = word.bbox
    return (
        x >= -EDGE_SLACK_PX
        and y >= -EDGE_SLACK_PX
        and x + w <= image.width + EDGE_SLACK_PX
        and y + h <= image.height + EDGE_SLACK_PX
    )


def target_word(image: TextocrImage) -> tuple[TextocrWord | None, str]:
    """The word the red box goes around, or None and why the image has none."""
    legible = [w for w in image.words if is_legible(w)]
    upright = [w for w in legible if is_axis_aligned(w)]
    inside = [w for w in upright if is_inside(w, image)]
    if inside:
        return min(inside, key=lambda w: (-w.box_area, w.id)), ""
    reasons = ((image.words, "no_words"), (legible, "only_illegible"),
               (upright, "only_rotated_or_curved"))  # fmt: skip
    return None, next((reason for words, reason in reasons if not words), "only_outside_image")


def select_images(
    images: list[TextocrImage], n: int, seed: int, split: str, annotations: Path
) -> tuple[list[tuple[TextocrImage, TextocrWord]], Counter]:
    """``n`` usable images with their words, drawn independently of file order; the skip
    counts per reason."""
    usable, skipped = [], Counter()
    for image in sorted(images, key=lambda i: i.id):
        word, reason = target_word(image)
        if word is None:
            skipped[reason] += 1
        else:
            usable.append((image, word))
    if len(usable) < n:
        raise PlanError(
            f"textocr: the {split} annotations hold {len(usable)} images with a legible, "
            f"axis-aligned word but {n} are needed (skipped: {dict(skipped)})",
            path=annotations,
            fix=f"use the full TextOCR {split} annotations, or lower "
            "vlicl.sizes.<profile>.textocr in params.yaml",
        )
    rng = derived_rng(seed, FAMILY, f"{TASK}/select/{split}", 0)
    picked = sorted(int(i) for i in rng.choice(len(usable), n, replace=False))
    return [usable[i] for i in picked], skipped


def box_width(width: int, height: int) -> int:
    """Line width of the red box: 2 px, and 1 px more per 256 px of the longer side."""
    return 2 + max(width, height) // 256


def render_boxed(image: TextocrImage, word: TextocrWord) -> bytes:
    """The image with the red box around ``word``, as JPEG bytes."""
    try:
        with Image.open(image.path) as opened:
            opened.load()
            picture = opened.convert("RGB")
    except (OSError, UnidentifiedImageError, Image.DecompressionBombError) as exc:
        raise SourceError(f"cannot decode the TextOCR image of {image.id} ({exc})",
                          path=image.path, fix=f"unpack it again from {IMAGES_URL}") from exc  # fmt: skip
    if picture.size != (image.width, image.height):
        raise SourceError(
            f"the image of {image.id} is {picture.width}x{picture.height} but its annotations "
            f"say {image.width}x{image.height}, so the word's box would be misplaced",
            path=image.path,
            fix=f"use the image from train_val_images.zip ({IMAGES_URL}) unchanged",
        )
    line = box_width(image.width, image.height)
    x, y, w, h = word.bbox
    left = max(0, math.floor(x) - 2 * line)
    top = max(0, math.floor(y) - 2 * line)
    right = min(image.width - 1, math.ceil(x + w) + 2 * line - 1)
    bottom = min(image.height - 1, math.ceil(y + h) + 2 * line - 1)
    ImageDraw.Draw(picture).rectangle((left, top, right, bottom), outline=BOX_RGB, width=line)
    buffer = io.BytesIO()
    picture.save(buffer, "JPEG", quality=JPEG_QUALITY, subsampling=0)
    return buffer.getvalue()


def textocr_rows(
    chosen: list[tuple[TextocrImage, TextocrWord]],
    split: str,
    *,
    root: Path,
    hashes: ImageHashes,
    annotations_sha: str,
    rendered_dir: Path,
) -> list[dict[str, Any]]:
    source_split = SOURCE_SPLITS[split]
    rows = []
    for k, (image, word) in enumerate(chosen):
        data = render_boxed(image, word)
        file = f"{TASK}/{image.id}.jpg"
        atomic_write_bytes(rendered_dir / file, data)
        ref = image_ref("rendered", file, sha256_bytes(data))
        image_file = relative_posix(image.path, root)

        def cite(id: str, file: str, sha256: str, license: str = TEXTOCR_LICENSE) -> dict:
            return source_ref(dataset="textocr", split=source_split, id=id, file=file,
                              sha256=sha256, license=license, url=TEXTOCR_URL)  # fmt: skip

        sources = [
            cite(word.id, annotations_path(".", source_split).name, annotations_sha),
            cite(image.id, image_file, hashes(image.path)),
            source_ref(dataset="rendered", split=split, id=file, file=f"rendered/{file}",
                       sha256=ref["sha256"], license=TEXTOCR_LICENSE, url=TEXTOCR_URL),
        ]  # fmt: skip
        rows.append(
            make_row(
                TASK,
                split,
                k,
                images=[ref],
                question=QUESTION,
                answer=word.text.strip(),
                extras={
                    "bbox": list(word.bbox),
                    "points": list(word.points),
                    "area": word.area,
                    "img_w": image.width,
                    "img_h": image.height,
                    "textocr_img_id": image.id,
                    "ann_id": word.id,
                },
                sources=sources,
            )
        )
    return rows


def build_textocr(
    train: list[TextocrImage],
    val: list[TextocrImage],
    *,
    n_support: int,
    n_query: int,
    seed: int,
    root: Path,
    hashes: ImageHashes,
    annotations_sha256: dict[str, str],
    rendered_dir: Path,
) -> TaskRows:
    """``annotations_sha256`` maps ``train``/``val`` to the annotation file's hash."""
    shared = {i.id for i in train} & {i.id for i in val}
    if shared:
        raise PlanError(
            f"textocr: {len(shared)} image(s) are in both the train and val annotations "
            f"(e.g. {sorted(shared)[0]}), so support and query would share images",
            path=annotations_path(root, "val"),
            fix="use the official TextOCR_0.1_{train,val}.json (their images are disjoint)",
        )
    picked, skipped = {}, {}
    for split, images, n in (("support", train, n_support), ("query", val, n_query)):
        source = SOURCE_SPLITS[split]
        picked[split], skipped[source] = select_images(
            images, n, seed, source, annotations_path(root, source)
        )
    rows = {
        split: textocr_rows(
            picked[split],
            split,
            root=root,
            hashes=hashes,
            annotations_sha=annotations_sha256[SOURCE_SPLITS[split]],
            rendered_dir=rendered_dir,
        )  # fmt: skip
        for split in ("support", "query")
    }
    support_words = {r["answer"].casefold() for r in rows["support"]}
    return TaskRows(
        rows["support"],
        rows["query"],
        {
            "skipped_images": {s: dict(sorted(c.items())) for s, c in skipped.items()},
            "query_words_also_in_support": sum(
                r["answer"].casefold() in support_words for r in rows["query"]
            ),
            "render": {
                "format": "JPEG",
                "quality": JPEG_QUALITY,
                "subsampling": "4:4:4",
                "libjpeg_turbo": features.version("libjpeg_turbo"),
            },  # fmt: skip
        },
    )
