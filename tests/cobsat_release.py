"""A miniature CoBSAT task in the VL-ICL release's format (``cobsat/{support,query}.json`` and
zips), with images whose pixels say what they show: the object is a bar's width, the attribute its
colour, so a test can check a gold or a judge by looking.

Three scenarios of CoBSAT's ``color`` task: two share the latent field (``object``: ball, box)
so that only the latent *value* keeps their demonstrations apart, one has ``attribute`` (red)
latent. Each has 8 support rows and 2 queries; one query names its reference image by ``id``
only, as some T2I queries of the release do.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

from PIL import Image, ImageDraw

COLOURS = {"red": (220, 30, 30), "blue": (30, 60, 220), "green": (30, 170, 60),
           "yellow": (235, 215, 40), "purple": (140, 50, 170), "orange": (245, 140, 30),
           "pink": (245, 150, 200), "brown": (120, 75, 35), "black": (15, 15, 15),
           "white": (250, 250, 250)}  # fmt: skip
OBJECTS = ("ball", "box", "star", "ring", "bar", "cross", "kite", "drop", "leaf", "cone")
SCENARIOS = (  # (CoBSAT task, latent field, latent value, 8 support + 2 query non-latent values)
    ("color", "object", "ball", ("red", "blue", "green", "yellow", "purple", "orange", "pink",
                                 "brown", "black", "white")),
    ("color", "object", "box", ("blue", "green", "red", "pink", "brown", "yellow", "orange",
                                "purple", "white", "black")),
    ("color", "attribute", "red", OBJECTS),
)  # fmt: skip


def draw(obj: str, colour: str, size: int = 48) -> bytes:
    """A bar of ``colour`` on grey whose width says the object: 4 px per place in OBJECTS."""
    image = Image.new("RGB", (size, size), (128, 128, 128))
    width = 4 * (OBJECTS.index(obj) + 1)
    ImageDraw.Draw(image).rectangle((2, 4, 2 + width - 1, size - 5), fill=COLOURS[colour])
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def seen(data: bytes) -> tuple[str, str] | None:
    """(object, colour) an image shows, read back from its pixels; None for anything else."""
    image = Image.open(io.BytesIO(data)).convert("RGB")
    colour = next((n for n, rgb in COLOURS.items() if rgb == image.getpixel((3, 24))), None)
    if colour is None or image.size != (48, 48):
        return None
    width = sum(image.getpixel((x, 24)) == COLOURS[colour] for x in range(48))
    return (OBJECTS[width // 4 - 1], colour) if width % 4 == 0 and width <= 40 else None


def write_cobsat_release(root: Path) -> Path:
    """``root/cobsat/...``; returns ``root`` (the release root ingest reads)."""
    folder = root / "cobsat"
    folder.mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[dict]] = {"support": [], "query": []}
    images: dict[str, dict[str, bytes]] = {"support": {}, "query": {}}
    for s, (task, latent, value, others) in enumerate(SCENARIOS):
        for k, other in enumerate(others):
            split = "support" if k < 8 else "query"
            obj, colour = (value, other) if latent == "object" else (other, value)
            name = f"{task}_{s}_{obj}_{colour}.png"
            images[split][name] = draw(obj, colour)
            row = {"task": task, "latent": latent, "object": obj, "attribute": colour,
                   "question": other, "image": f"cobsat/{split}/{name}",
                   "answer": [value, other]}  # fmt: skip
            if split == "query" and k == 9 and s == 0:
                row.pop("image")
                row["id"] = f"{task}_{s}_{obj}_{colour}"
            rows[split].append(row)
    for split in ("support", "query"):
        (folder / f"{split}.json").write_text(json.dumps(rows[split], indent=1), encoding="utf-8")
        with zipfile.ZipFile(folder / f"{split}.zip", "w") as archive:
            for name, data in sorted(images[split].items()):
                archive.writestr(f"{split}/{name}", data)
    return root
