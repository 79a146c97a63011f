"""A miniature of the VL-ICL release's 2-way text-to-image tasks (``open_t2i_mi``,
``fast_count_t2i``, ``fast_attr_t2i``) in its format: ``<task>/query.json`` entries that store
their episode (``task_label``, ``classes``, ``support[key]`` with ``images``, ``captions`` and
``real_name``), the query's prompt (``question``) and ``answer``, images in ``<task>/*.zip``.

The field names are the ones the original's ``select_demonstration`` and judge read; each image
is a flat colour that encodes (task, query, class, shot), so a test can tell which stored image
a demonstration used.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

from PIL import Image

CLASSES = ("dax", "blicket", "perpo")
REAL = {"dax": "school bus", "blicket": "golden retriever", "perpo": "ladybug"}
COUNTS = ("two", "three", "four", "five", "six")
TASKS = ("open_t2i_mi", "fast_count_t2i", "fast_attr_t2i")
SHOTS_STORED = 5


def caption(task: str, key: str, shot: int) -> str | None:
    if task == "fast_count_t2i":
        return f"{COUNTS[shot]} {key}s"
    if task == "fast_attr_t2i":
        return f"{('red', 'green', 'blue', 'white', 'black')[shot]} {key}"
    return None


def colour(t: int, q: int, c: int, shot: int) -> tuple[int, int, int]:
    return (40 * t + 10 * q, 60 * c + 5, 40 * shot + 20)


def png(rgb: tuple[int, int, int]) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (16, 16), rgb).save(buffer, format="PNG")
    return buffer.getvalue()


def write_t2i_release(root: Path) -> Path:
    for t, task in enumerate(TASKS):
        folder = root / task
        folder.mkdir(parents=True, exist_ok=True)
        entries, images = [], {"support": {}, "query": {}}
        for q, label in enumerate(("blicket", "dax")):
            support = {}
            for c, key in enumerate(CLASSES):
                paths = []
                for shot in range(SHOTS_STORED):
                    name = f"q{q}_{key}_{shot}.png"
                    images["support"][name] = png(colour(t, q, c, shot))
                    paths.append(f"{task}/support/{name}")
                captions = [caption(task, key, s) or f"this is a {key}" for s in range(5)]
                support[key] = {"images": paths, "captions": captions, "real_name": REAL[key]}
            prompt = {"open_t2i_mi": f"Generate a {label}", "fast_count_t2i": f"Generate three {label}s",
                      "fast_attr_t2i": f"Generate a blue {label}"}[task]  # fmt: skip
            answer = {"open_t2i_mi": REAL[label], "fast_count_t2i": f"three {REAL[label]}s",
                      "fast_attr_t2i": f"blue {REAL[label]}"}[task]  # fmt: skip
            entry = {"task_label": label, "classes": list(CLASSES), "support": support,
                     "question": prompt, "answer": answer}  # fmt: skip
            if q == 0:
                images["query"][f"q{q}.png"] = png((250, 250, 250 - t))
                entry["image"] = f"{task}/query/q{q}.png"
            else:
                entry["id"] = f"{task}_q{q}"
            entries.append(entry)
        (folder / "query.json").write_text(json.dumps(entries, indent=1), encoding="utf-8")
        for split in ("support", "query"):
            with zipfile.ZipFile(folder / f"{split}.zip", "w") as archive:
                for name, data in sorted(images[split].items()):
                    archive.writestr(f"{split}/{name}", data)
    return root
