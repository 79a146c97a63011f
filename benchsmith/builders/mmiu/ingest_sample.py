"""A miniature official MMIU release in its real layout, for trying and testing ingest mode.

``OUT/all.parquet`` (the release's columns: task, visual_input_component, source, options,
question, context, input_image_path, output) and ``OUT/<Relationship>/<task>/<task>_<row>_<img>
.<ext>`` images, with the release's known faults in place so that ingest can be seen to find
them: 3D pose rows whose gold is the only near-identity matrix (a tiny entry written in exponent
notation, ``3.1e-05``, as the release writes them), 3D reconstruction rows whose gold candidate
is the only ``.jpg`` (options worded "The 5th image", as in the release), an HE row with two equal options, spot_the_diff rows asking
for the incorrect description, a split task (forensic_detection_blink / _forgerynet), a row with
nine options, a ``.JPEG`` path, a "Candidates: A. Yes B. No" context, the ``source`` field set
to "source", and one row whose answer is not among its options.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from benchsmith.core.atomic import atomic_directory

POSE_ROWS = 12
RECON_ROWS = 12  # enough for a blind rule that answers every one to fail the gate


def _image(rng: np.random.Generator, fmt: str) -> bytes:
    colour = tuple(int(v) for v in rng.integers(0, 256, 3))
    image = Image.new("RGB", (32, 24), colour)
    image.paste(tuple(255 - c for c in colour), (4, 4, 14, 12))
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG" if fmt in ("jpg", "JPEG", "JPG") else "PNG")
    return buffer.getvalue()


def _matrix(values: np.ndarray, decimals: int | None) -> str:
    text = (lambda v: repr(float(v))) if decimals is None else (lambda v: f"{v:.{decimals}f}")
    return "[" + ", ".join("[" + ", ".join(text(v) for v in row) + "]" for row in values) + "]"


def _options(options: list[str], trailing: str = "\n") -> str:
    return "\n".join(f"{chr(65 + k)}: {o}" for k, o in enumerate(options)) + trailing


def sample_rows(seed: int = 0) -> list[dict[str, Any]]:
    """The rows, each with ``images`` as (folder, extension) pairs to write."""
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []

    def add(task, relationship, source, options, output, question, context, exts, **kw):
        rows.append({"task": task, "relationship": relationship, "source": source,
                     "options": options, "output": output, "question": question,
                     "context": context, "exts": exts,
                     "visual_input_component": kw.get("component", "natural_image")})  # fmt: skip

    for k in range(POSE_ROWS):  # gold: the only near-identity matrix, at full precision
        gold = np.eye(4)[:3] + rng.normal(0, 0.002, (3, 4))
        if k % 3 == 0:  # as in the release, a tiny entry written in exponent notation
            gold[0, 1] = 3.1e-05
        absolute = [np.c_[np.eye(3), rng.uniform(1, 6, 3)] + rng.normal(0, 0.3, (3, 4))
                    for _ in range(3)]  # fmt: skip
        options = [_matrix(a, 6) for a in absolute]
        position = k % 4
        options.insert(position, _matrix(gold, None))
        add("threed_pose_estimation", "3D-spatial", "SCANNET_threed_pose", _options(options),
            chr(65 + position), "What is the relative pose from scan 0 to scan 1?",
            "Given RGB and depth of two scans.\nSelect from the following choices.\n"
            + _options(options), ["jpg", "png", "jpg", "png"], component="['RGB', 'depth']")  # fmt: skip
    for k in range(RECON_ROWS):  # gold candidate: the only .jpg
        position = (k + 1) % 4
        exts = ["jpg", "png", "jpg", "png"] + ["png"] * 4
        exts[4 + position] = "jpg"
        options = [f"The {n}th image" for n in range(5, 9)]  # the release's wording
        add("threed_scene_reconstruction", "3D-spatial", "SCANNET_threed_recon",
            _options(options), chr(65 + position), "Which candidate was taken at the query pose?",
            "Two views and a query pose.\nSelect from the following choices.\n"
            + _options(options), exts)  # fmt: skip
    he = ["[[1.02, 0.01, 3.5], [0.0, 0.98, -2.1], [0.0, 0.0, 1.0]]",
          "[[0.91, 0.12, 8.0], [0.05, 1.1, 4.2], [0.0, 0.0, 1.0]]",
          "[[1.2, -0.1, 1.0], [0.2, 0.9, 0.5], [0.0, 0.0, 1.0]]"]  # fmt: skip
    he.append(he[2])  # the release's duplicate options: C == D, gold C
    add("homography_estimation", "2D-spatial", "HPatches", _options(he, ""), "C",
        "Which homography maps image 1 to image 2?", "Select from the following choices.\n"
        + _options(he, ""), ["png", "png"])  # fmt: skip
    for k in range(2):
        options = ["The car in the left image is red.", "A man is missing in the right image."]
        add("spot_the_diff", "High-level-obj-semantic", "Spot-the-Diff", _options(options),
            "AB"[k], "Which description of the difference is incorrect?",
            "Compare the two images.\nSelect from the following choices.\n" + _options(options),
            ["png", "png"])  # fmt: skip
    for source in ("forensic_detection_blink", "forensic_detection_forgerynet"):
        options = [f"The {n} image" for n in ("first", "second", "third", "fourth")]
        add(source, "Low-level-semantic", source.split("_")[-1], _options(options), "B",
            "Which image is real?", "Select from the following choices.\n" + _options(options),
            ["JPEG", "JPG", "jpg", "png"])  # fmt: skip
    nine = [f"[{k}]" for k in range(1, 10)]
    add("image_text_retrieval_with_spatial_context", "2D-spatial", "source", _options(nine),
        "I", "Which image fits the description?", "Select from the following choices.\n"
        + _options(nine), ["jpg"] * 18)  # fmt: skip
    add("spot_the_similarity", "High-level-obj-semantic", "TLL", _options(["Yes", "No"]), "A",
        "Are these the same place?", "Candidates: A. Yes B. No", ["jpg", "jpg"])  # fmt: skip
    add("spot_the_similarity", "High-level-obj-semantic", "TLL", _options(["Yes", "No"]), "E",
        "Are these the same place?", "Candidates: A. Yes B. No", ["jpg", "jpg"])  # fmt: skip
    return rows


def write_sample_release(out_dir: str | Path, seed: int = 0) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    out_dir = Path(out_dir)
    rows = sample_rows(seed)
    counters: dict[str, int] = {}
    with atomic_directory(out_dir) as staging:
        table_rows = []
        for row in rows:
            index = counters[row["task"]] = counters.get(row["task"], -1) + 1
            paths = []
            for k, ext in enumerate(row["exts"]):
                relative = f"{row['relationship']}/{row['task']}/{row['task']}_{index}_{k}.{ext}"
                (staging / relative).parent.mkdir(parents=True, exist_ok=True)
                (staging / relative).write_bytes(_image(rng, ext))
                paths.append(f"./{relative}")
            table_rows.append({key: row[key] for key in ("task", "visual_input_component",
                               "source", "options", "question", "context", "output")}
                              | {"input_image_path": paths})  # fmt: skip
        pq.write_table(pa.Table.from_pylist(table_rows), staging / "all.parquet")
    return out_dir
