"""A small multiple-choice VQA dataset in Hugging Face parquet layout, with planted problems.

Written the way ``Dataset.to_parquet``/``push_to_hub`` write it (HF features in the parquet
metadata, ``Image`` struct columns), so the curation code reads it like any Hub dataset.

Planted, by sample index ``i`` (ids ``q000``..):
- ``i % 10 == 3``: the correct option is by far the longest (a blind shortcut);
- ``i == 5``: the sample's two images are pixel-identical (PNG with and without metadata);
- ``i == 7``: its image is a JPEG re-encode of sample 8's image (near duplicate across samples);
- ``i == 9``: its image is also in the ``support`` split (cross-split leakage);
- every other image is a distinct random texture.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import datasets
import numpy as np
from PIL import Image, PngImagePlugin

LETTERS = "ABCD"
SUBTASKS = ("charts", "scenes")


def texture(seed: int, size: int = 64) -> Image.Image:
    rng = np.random.default_rng(seed)
    small = rng.integers(0, 256, size=(8, 8, 3), dtype=np.uint8)
    return Image.fromarray(small).resize((size, size), Image.Resampling.BICUBIC)


def png_bytes(image: Image.Image, note: str | None = None) -> bytes:
    buffer = io.BytesIO()
    info = None
    if note:
        info = PngImagePlugin.PngInfo()
        info.add_text("note", note)
    image.save(buffer, format="PNG", pnginfo=info)
    return buffer.getvalue()


def jpeg_bytes(image: Image.Image, quality: int) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="JPEG", quality=quality)
    return buffer.getvalue()


FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "subtask": datasets.Value("string"),
        "question": datasets.Value("string"),
        "choices": datasets.List(datasets.Value("string")),
        "answer": datasets.Value("string"),
        "images": datasets.List(datasets.Image()),
    }
)


def sample_rows(n: int) -> list[dict]:
    rows = []
    for i in range(n):
        answer_index = i % 4
        choices = [f"option {k} for {i}" for k in range(4)]
        if i % 10 == 3:
            choices[answer_index] = f"the clearly correct and much longer answer number {i}"
        images = [png_bytes(texture(1000 + i))]
        if i == 5:
            images.append(png_bytes(texture(1000 + i), note="same pixels, other metadata"))
        if i == 7:
            images = [jpeg_bytes(texture(1008), quality=70)]
        if i == 8:
            images = [jpeg_bytes(texture(1008), quality=95)]
        if i == 9:
            images = [png_bytes(texture(5000))]
        rows.append(
            {
                "id": f"q{i:03d}",
                "subtask": SUBTASKS[i % 2],
                "question": f"What is shown in picture number {i} of the {SUBTASKS[i % 2]} set?",
                "choices": choices,
                "answer": LETTERS[answer_index],
                "images": [{"bytes": b, "path": None} for b in images],
            }
        )
    return rows


def support_rows() -> list[dict]:
    rows = []
    for i in range(4):
        seed = 5000 if i == 0 else 9000 + i
        rows.append(
            {
                "id": f"s{i:03d}",
                "subtask": "charts",
                "question": f"Support question {i}?",
                "choices": ["a", "b", "c", "d"],
                "answer": "A",
                "images": [{"bytes": png_bytes(texture(seed)), "path": None}],
            }
        )
    return rows


def write_mcq_dataset(root: Path, n: int = 40, config: str = "vqa") -> Path:
    """``root/data/<config>/{test,support}-00000-of-00001.parquet`` plus a README configs block."""
    for split, rows in (("test", sample_rows(n)), ("support", support_rows())):
        folder = root / "data" / config
        folder.mkdir(parents=True, exist_ok=True)
        datasets.Dataset.from_list(rows, features=FEATURES).to_parquet(
            str(folder / f"{split}-00000-of-00001.parquet")
        )
    (root / "README.md").write_text(
        "---\nconfigs:\n"
        f"- config_name: {config}\n  data_files:\n"
        f"  - split: test\n    path: data/{config}/test-*.parquet\n"
        f"  - split: support\n    path: data/{config}/support-*.parquet\n"
        "---\n\n# toy\n",
        encoding="utf-8",
    )
    return root


# --- judges and a reference corpus for the toy dataset ----------------------------------

N = 40
JUDGES = [f"judge-{k}" for k in range(9)]


def gold_letter(i: int) -> str:
    return LETTERS[i % 4]


def write_judges(folder: Path, skip: set[tuple[int, int]] = frozenset()) -> list[Path]:
    """Nine judges; sample i is solved by exactly i % 10 of them (judges 0..n-1)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k, model in enumerate(JUDGES):
        path = folder / f"{model}.jsonl"
        with path.open("w", encoding="utf-8") as handle:
            for i in range(N):
                if (k, i) in skip:
                    continue
                right = k < i % 10
                response = gold_letter(i) if right else LETTERS[(i + 1) % 4]
                row = {"sample_id": f"q{i:03d}", "model": model, "response": response}
                handle.write(json.dumps(row) + "\n")
        paths.append(path)
    return paths


def write_corpus(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(
        "An exam page. What is shown in picture number 11 of the scenes set? Answer: B\n",
        encoding="utf-8",
    )
    return corpus
