"""CLEVR Count Induction: ``"<attribute>: <value>"`` -> how many such objects (spec §2).

Support items come from CLEVR ``train`` scenes and query items from ``val`` scenes (disjoint
images by construction). The released data says nothing about how questions were chosen, so:

* scenes: the scene list is sorted by ``image_index`` (file order does not matter) and
  ``n`` scenes are drawn without replacement, then listed by ``image_index``;
* attribute: uniform over size, color, material, shape;
* value: uniform over the values *present* in the scene for that attribute, so every count is
  >= 1 (``value_present`` is true; the original's answers seen were all >= 2, and a zero count
  would let "0" be a shortcut). Scenes without objects are skipped and counted;
* answer: recounted from the scene's objects, ``sum(obj[attribute] == value)``.

Attribute and value for a scene come from ``derived_rng(seed, "vlicl", "clevr/<split>/question",
image_index)``, so a scene always gets the same question whichever other scenes are drawn.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from benchsmith.builders.vlicl import (
    FAMILY,
    ImageHashes,
    TaskRows,
    image_ref,
    make_row,
    relative_posix,
)
from benchsmith.core.errors import PlanError
from benchsmith.core.records import source_ref
from benchsmith.core.rng import derived_rng
from benchsmith.sources.clevr.reader import CLEVR_LICENSE, ClevrScene, scenes_path

TASK = "clevr"
ATTRIBUTES = ("size", "color", "material", "shape")
SOURCE_SPLITS = {"support": "train", "query": "val"}
URL = "https://cs.stanford.edu/people/jcjohns/clevr/"


def question_for(scene: ClevrScene, seed: int) -> tuple[str, str, int]:
    """(attribute, value, count) for one scene; value is present in the scene (count >= 1)."""
    rng = derived_rng(seed, FAMILY, f"{TASK}/{scene.split}/question", scene.image_index)
    attribute = ATTRIBUTES[int(rng.integers(len(ATTRIBUTES)))]
    values = sorted({str(obj[attribute]) for obj in scene.objects})
    value = values[int(rng.integers(len(values)))]
    count = sum(1 for obj in scene.objects if obj[attribute] == value)
    return attribute, value, count


def select_scenes(
    scenes: list[ClevrScene], n: int, seed: int, split: str, root: Path
) -> tuple[list[ClevrScene], int]:
    """``n`` scenes with objects, drawn independently of file order; (chosen, skipped empty)."""
    usable = sorted((s for s in scenes if s.objects), key=lambda s: s.image_index)
    indices = [s.image_index for s in usable]
    if len(set(indices)) != len(indices):
        raise PlanError(
            f"clevr: {split} scenes repeat an image_index",
            path=scenes_path(root, split),
            fix="use the official CLEVR v1.0 scenes file",
        )
    if len(usable) < n:
        raise PlanError(
            f"clevr: the {split} scenes hold {len(usable)} usable scenes (with objects) but "
            f"{n} are needed",
            path=scenes_path(root, split),
            fix=f"use the full CLEVR v1.0 {split} scenes, or lower "
            "vlicl.sizes.<profile>.clevr in params.yaml",
        )
    rng = derived_rng(seed, FAMILY, f"{TASK}/select/{split}", 0)
    picked = sorted(int(i) for i in rng.choice(len(usable), n, replace=False))
    return [usable[i] for i in picked], len(scenes) - len(usable)


def _scene_records(
    scene: ClevrScene, root: Path, hashes: ImageHashes, scenes_sha: str
) -> tuple[dict[str, str], list[dict[str, str]]]:
    file = relative_posix(scene.image_path, root)
    sha = hashes(scene.image_path)
    sources = [
        source_ref(
            dataset="clevr",
            split=scene.split,
            id=scene.image_filename,
            file=file,
            sha256=sha,
            license=CLEVR_LICENSE,
            url=URL,
        ),
        source_ref(
            dataset="clevr",
            split=scene.split,
            id=f"scene:{scene.image_index}",
            file=relative_posix(scenes_path(root, scene.split), root),
            sha256=scenes_sha,
            license=CLEVR_LICENSE,
            url=URL,
        ),
    ]
    return image_ref("clevr", file, sha), sources


def clevr_rows(
    scenes: list[ClevrScene],
    split: str,
    *,
    seed: int,
    root: Path,
    hashes: ImageHashes,
    scenes_sha: str,
) -> list[dict[str, Any]]:
    rows = []
    for k, scene in enumerate(scenes):
        attribute, value, count = question_for(scene, seed)
        ref, sources = _scene_records(scene, root, hashes, scenes_sha)
        rows.append(
            make_row(
                TASK,
                split,
                k,
                images=[ref],
                question=f"{attribute}: {value}",
                answer=count,
                extras={
                    "attribute": attribute,
                    "value": value,
                    "count": count,
                    "source_split": scene.split,
                    "scene_index": scene.image_index,
                    "value_present": count > 0,
                },
                sources=sources,
            )
        )
    return rows


def build_clevr(
    train_scenes: list[ClevrScene],
    val_scenes: list[ClevrScene],
    *,
    n_support: int,
    n_query: int,
    seed: int,
    root: Path,
    hashes: ImageHashes,
    scenes_sha256: dict[str, str],
) -> TaskRows:
    """``scenes_sha256`` maps ``train``/``val`` to the scenes file hash (provenance)."""
    support_scenes, skipped_train = select_scenes(train_scenes, n_support, seed, "train", root)
    query_scenes, skipped_val = select_scenes(val_scenes, n_query, seed, "val", root)
    support = clevr_rows(
        support_scenes,
        "support",
        seed=seed,
        root=root,
        hashes=hashes,
        scenes_sha=scenes_sha256["train"],
    )
    query = clevr_rows(
        query_scenes, "query", seed=seed, root=root, hashes=hashes, scenes_sha=scenes_sha256["val"]
    )
    return TaskRows(
        support,
        query,
        {
            "answer_histogram": {
                split: dict(sorted(Counter(int(r["answer"]) for r in rows).items()))
                for split, rows in (("support", support), ("query", query))
            },
            "attribute_histogram": {
                split: dict(sorted(Counter(r["extras"]["attribute"] for r in rows).items()))
                for split, rows in (("support", support), ("query", query))
            },
            "skipped_scenes_without_objects": {"train": skipped_train, "val": skipped_val},
        },
    )
