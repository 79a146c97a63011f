"""Matching MiniImageNet: do two images show the same class? (spec §2).

Support pairs come from ``train.csv`` classes and query pairs from ``test.csv`` classes, so the
relation must be learnt on classes never seen at test time (the paper's "disjoint sets of
classes"; asserted here, not assumed). Both splits are built as *groups* of one same-class pair
and one different-class pair, exactly like the released ``support.json`` entries
(``{"same": ..., "diff": ...}``), which makes every split exactly 50/50 Yes/No.

Per group ``g`` one generator ``derived_rng(seed, "vlicl", "matching_mi/<split>", g)`` draws:
the same-pair class and two distinct images of it, then two distinct classes and one image of
each. Images whose sha256 is in ``exclude_sha256`` (the open_mi query images, so the two tasks
share no query image) or pairs of byte-identical images are redrawn.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchsmith.builders.vlicl import FAMILY, ImageHashes, TaskRows, make_row
from benchsmith.builders.vlicl.open_mi import mini_image_ref, mini_source_record
from benchsmith.core.errors import PlanError
from benchsmith.core.rng import derived_rng
from benchsmith.sources.miniimagenet.reader import MiniImage, MiniImageNet

TASK = "matching_mi"
QUESTION = "Do the two images satisfy the induced relationship?"
SOURCE_SPLITS = {"support": "train", "query": "test"}
MAX_DRAWS = 200  # redraws per image before a class counts as exhausted


def _check_pool(mini: MiniImageNet, split: str, classes: dict[str, list[MiniImage]]) -> None:
    csv = mini.csv_path(SOURCE_SPLITS[split])
    if len(classes) < 2:
        raise PlanError(
            f"matching_mi {split}: {csv.name} lists {len(classes)} classes, a different-class "
            "pair needs at least 2",
            path=csv,
            fix="use the complete Ravi-Larochelle split (train 64 / test 20 classes)",
        )
    for label, images in classes.items():
        if len(images) < 2:
            raise PlanError(
                f"matching_mi {split}: class {label} in {csv.name} has {len(images)} image(s), "
                f"a same-class pair needs 2 (images folder {mini.root / 'images'})",
                path=csv,
                fix="use a complete MiniImageNet copy (600 images per class)",
            )


def assert_disjoint_classes(support: list[dict], query: list[dict]) -> None:
    support_classes = {c for r in support for c in (r["extras"]["class_a"], r["extras"]["class_b"])}
    query_classes = {c for r in query for c in (r["extras"]["class_a"], r["extras"]["class_b"])}
    shared = sorted(support_classes & query_classes)
    if shared:
        raise PlanError(
            f"matching_mi: support and query share classes {shared[:5]}",
            fix="use MiniImageNet CSVs whose train and test classes are disjoint",
        )


class _Drawer:
    """Draws images of one class, skipping excluded or already-paired byte contents."""

    def __init__(self, classes, hashes: ImageHashes, exclude: frozenset[str], where: str):
        self.classes = classes
        self.hashes = hashes
        self.exclude = exclude
        self.where = where
        self.skipped = 0

    def image(self, label: str, rng: np.random.Generator, avoid: set[str]) -> tuple[MiniImage, str]:
        images = self.classes[label]
        for _ in range(MAX_DRAWS):
            image = images[int(rng.integers(len(images)))]
            sha = self.hashes(image.path)
            if sha not in self.exclude and sha not in avoid:
                return image, sha
            self.skipped += 1
        raise PlanError(
            f"matching_mi: no usable image left in class {label} after {MAX_DRAWS} draws "
            "(all excluded as open_mi query images or byte copies)",
            path=self.where,
            fix="use a complete MiniImageNet copy or fewer open_mi episodes",
        )


def build_matching_split(
    mini: MiniImageNet,
    split: str,
    pairs: int,
    *,
    seed: int,
    hashes: ImageHashes,
    exclude_sha256: frozenset[str] = frozenset(),
) -> tuple[list[dict[str, Any]], int]:
    """Rows ``2g`` (same, "Yes") and ``2g + 1`` (different, "No") for each group ``g``."""
    classes = mini.classes(SOURCE_SPLITS[split])
    _check_pool(mini, split, classes)
    labels = list(classes)
    drawer = _Drawer(classes, hashes, exclude_sha256, str(mini.csv_path(SOURCE_SPLITS[split])))
    rows = []
    for group in range(pairs // 2):
        rng = derived_rng(seed, FAMILY, f"{TASK}/{split}", group)
        same = labels[int(rng.integers(len(labels)))]
        first = drawer.image(same, rng, set())
        second = drawer.image(same, rng, {first[1]})
        a, b = (labels[int(i)] for i in rng.choice(len(labels), 2, replace=False))
        left = drawer.image(a, rng, set())
        right = drawer.image(b, rng, {left[1]})
        for offset, (label, answer, (x, y), (ca, cb)) in enumerate(
            (
                ("same", "Yes", (first, second), (same, same)),
                ("different", "No", (left, right), (a, b)),
            )
        ):
            rows.append(
                make_row(
                    TASK,
                    split,
                    2 * group + offset,
                    images=[mini_image_ref(mini, x[0], x[1]), mini_image_ref(mini, y[0], y[1])],
                    question=QUESTION,
                    answer=answer,
                    extras={"group_id": group, "label": label, "class_a": ca, "class_b": cb},
                    sources=[
                        mini_source_record(mini, x[0], x[1]),
                        mini_source_record(mini, y[0], y[1]),
                    ],
                )
            )
    return rows, drawer.skipped


def build_matching_mi(
    mini: MiniImageNet,
    *,
    support_pairs: int,
    query_pairs: int,
    seed: int,
    hashes: ImageHashes,
    exclude_sha256: frozenset[str] = frozenset(),
) -> TaskRows:
    support, skipped_s = build_matching_split(
        mini, "support", support_pairs, seed=seed, hashes=hashes, exclude_sha256=exclude_sha256
    )
    query, skipped_q = build_matching_split(
        mini, "query", query_pairs, seed=seed, hashes=hashes, exclude_sha256=exclude_sha256
    )
    assert_disjoint_classes(support, query)
    return TaskRows(
        support,
        query,
        {
            "support_groups": support_pairs // 2,
            "query_groups": query_pairs // 2,
            "support_classes": len(mini.classes(SOURCE_SPLITS["support"])),
            "query_classes": len(mini.classes(SOURCE_SPLITS["query"])),
            "redrawn_images": skipped_s + skipped_q,
        },
    )
