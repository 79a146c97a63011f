"""A miniature of the VL-ICL release's tasks that benchsmith cannot rebuild, in its real format.

``VL-ICL/<task>/{support,query}.json`` plus ``<task>/{support,query}.zip``, and the images
already unpacked beside them as the release's ``unzip.sh`` leaves them (so a build never has
to write into the source folder). Images say what they show in their pixels, so a test can
check a gold, a demonstration or a judge by looking:

* ``cobsat``: three scenarios of CoBSAT's ``color`` task, 8 support rows and 2 queries each.
  Two share the latent field (``object``: ball, box) so that only the latent *value* keeps
  their demonstrations apart; one has ``attribute`` (red) latent. An image is a bar on grey:
  its width is the object (4 px per place in :data:`OBJECTS`), its colour the attribute. One
  query names its reference image by ``id`` only, as some T2I queries of the release do.
* ``open_t2i_mi``, ``fast_count_t2i``, ``fast_attr_t2i``: two queries each that store their
  2-way episode as the release does (``task_label``, ``classes``, ``support[key]`` with
  ``images``, ``captions``, ``real_name``), the prompt (``question``) and ``answer``; each
  image is a flat colour encoding (task, query, class, shot) (:func:`t2i_colour`).

The field names are the ones the original's ``select_demonstration`` and judge read.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

from PIL import Image, ImageDraw

from benchsmith.core.atomic import atomic_directory

RELEASE_DIRNAME = "VL-ICL"
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
COBSAT_SIZE = 48
T2I_CLASSES = ("dax", "blicket", "perpo")
T2I_REAL = {"dax": "school bus", "blicket": "golden retriever", "perpo": "ladybug"}
COUNTS = ("two", "three", "four", "five", "six")
T2I_TASKS = ("open_t2i_mi", "fast_count_t2i", "fast_attr_t2i")
SHOTS_STORED = 5
SAMPLE_TASKS = ("cobsat", *T2I_TASKS)


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def draw_cobsat(obj: str, colour: str, seed: int = 0) -> bytes:
    """A bar of ``colour`` on grey whose width says the object: 4 px per place in OBJECTS.
    The grey is ``128 + seed % 64``, so another seed writes other bytes, the same meaning."""
    grey = 128 + seed % 64
    image = Image.new("RGB", (COBSAT_SIZE, COBSAT_SIZE), (grey, grey, grey))
    width = 4 * (OBJECTS.index(obj) + 1)
    ImageDraw.Draw(image).rectangle((2, 4, 2 + width - 1, COBSAT_SIZE - 5), fill=COLOURS[colour])
    return _png(image)


def seen_cobsat(data: bytes) -> tuple[str, str] | None:
    """(object, colour) an image shows, read back from its pixels; None for anything else."""
    image = Image.open(io.BytesIO(data)).convert("RGB")
    colour = next((n for n, rgb in COLOURS.items() if rgb == image.getpixel((3, 24))), None)
    if colour is None or image.size != (COBSAT_SIZE, COBSAT_SIZE):
        return None
    width = sum(image.getpixel((x, 24)) == COLOURS[colour] for x in range(COBSAT_SIZE))
    return (OBJECTS[width // 4 - 1], colour) if width % 4 == 0 and width <= 40 else None


def t2i_caption(task: str, key: str, shot: int) -> str | None:
    if task == "fast_count_t2i":
        return f"{COUNTS[shot]} {key}s"
    if task == "fast_attr_t2i":
        return f"{('red', 'green', 'blue', 'white', 'black')[shot]} {key}"
    return None


def t2i_colour(t: int, q: int, c: int, shot: int) -> tuple[int, int, int]:
    """The flat colour of task ``t``'s query ``q``, class ``c``, stored shot ``shot``."""
    return (40 * t + 10 * q, 60 * c + 5, 40 * shot + 20)


def _write_task(folder: Path, rows: dict[str, list[dict]], images: dict[str, dict[str, bytes]],
                unpacked: bool) -> None:  # fmt: skip
    """``<task>/{split}.json`` and ``{split}.zip`` (members ``<split>/<name>``), and with
    ``unpacked`` the images under ``<task>/<split>/`` as unzip.sh leaves them."""
    folder.mkdir(parents=True, exist_ok=True)
    for split, entries in rows.items():
        (folder / f"{split}.json").write_text(json.dumps(entries, indent=1), encoding="utf-8")
    for split, files in images.items():
        with zipfile.ZipFile(folder / f"{split}.zip", "w") as archive:
            for name, data in sorted(files.items()):
                archive.writestr(zipfile.ZipInfo(f"{split}/{name}", (2024, 1, 1, 0, 0, 0)), data)
        if unpacked:
            (folder / split).mkdir(exist_ok=True)
            for name, data in files.items():
                (folder / split / name).write_bytes(data)


def write_cobsat_release(root: Path, *, seed: int = 0, unpacked: bool = False) -> Path:
    """``root/cobsat/...``; returns ``root`` (the release root ingest reads)."""
    rows: dict[str, list[dict]] = {"support": [], "query": []}
    images: dict[str, dict[str, bytes]] = {"support": {}, "query": {}}
    for s, (task, latent, value, others) in enumerate(SCENARIOS):
        for k, other in enumerate(others):
            split = "support" if k < 8 else "query"
            obj, colour = (value, other) if latent == "object" else (other, value)
            name = f"{task}_{s}_{obj}_{colour}.png"
            images[split][name] = draw_cobsat(obj, colour, seed)
            row = {"task": task, "latent": latent, "object": obj, "attribute": colour,
                   "question": other, "image": f"cobsat/{split}/{name}",
                   "answer": [value, other]}  # fmt: skip
            if split == "query" and k == 9 and s == 0:
                row.pop("image")
                row["id"] = f"{task}_{s}_{obj}_{colour}"
            rows[split].append(row)
    _write_task(Path(root) / "cobsat", rows, images, unpacked)
    return Path(root)


def write_t2i_release(root: Path, *, seed: int = 0, unpacked: bool = False) -> Path:
    """``root/{open_t2i_mi,fast_count_t2i,fast_attr_t2i}/...``; returns ``root``. Images are
    ``16 + seed % 8`` px square (another seed: other bytes, the same colours)."""
    side = 16 + seed % 8
    for t, task in enumerate(T2I_TASKS):
        entries, images = [], {"support": {}, "query": {}}
        for q, label in enumerate(("blicket", "dax")):
            support = {}
            for c, key in enumerate(T2I_CLASSES):
                paths = []
                for shot in range(SHOTS_STORED):
                    name = f"q{q}_{key}_{shot}.png"
                    picture = Image.new("RGB", (side, side), t2i_colour(t, q, c, shot))
                    images["support"][name] = _png(picture)
                    paths.append(f"{task}/support/{name}")
                captions = [t2i_caption(task, key, s) or f"this is a {key}" for s in range(5)]
                support[key] = {"images": paths, "captions": captions, "real_name": T2I_REAL[key]}
            prompt = {"open_t2i_mi": f"Generate a {label}", "fast_count_t2i": f"Generate three {label}s",
                      "fast_attr_t2i": f"Generate a blue {label}"}[task]  # fmt: skip
            answer = {"open_t2i_mi": T2I_REAL[label], "fast_count_t2i": f"three {T2I_REAL[label]}s",
                      "fast_attr_t2i": f"blue {T2I_REAL[label]}"}[task]  # fmt: skip
            entry = {"task_label": label, "classes": list(T2I_CLASSES), "support": support,
                     "question": prompt, "answer": answer}  # fmt: skip
            if q == 0:
                images["query"][f"q{q}.png"] = _png(
                    Image.new("RGB", (side, side), (250, 250, 250 - t))
                )
                entry["image"] = f"{task}/query/q{q}.png"
            else:
                entry["id"] = f"{task}_q{q}"
            entries.append(entry)
        _write_task(Path(root) / task, {"query": entries}, images, unpacked)
    return Path(root)


def write_sample_vlicl_release(out: str | Path, *, seed: int = 0) -> Path:
    """``out/VL-ICL/`` with :data:`SAMPLE_TASKS`, zips and their unpacked images, written
    atomically; returns that folder."""
    root = Path(out) / RELEASE_DIRNAME
    with atomic_directory(root) as staging:
        write_cobsat_release(staging, seed=seed, unpacked=True)
        write_t2i_release(staging, seed=seed, unpacked=True)
    return root
