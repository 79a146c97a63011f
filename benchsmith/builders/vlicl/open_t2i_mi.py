"""Text-to-image MiniImageNet (``open_t2i_mi``): ``open_mi``'s fast binding, turned around.

A demonstration is ("Generate a dax", an image of the class bound to "dax"); the query asks
"Generate a dax" and the model answers with an image, which a judge checks for the class's real
name ("school bus"). The original stores these as Frozen-style episodes like ``open_mi``'s and
its evaluation draws them the same way (``select_demonstration``: a distractor class and a class
order per query, shot i taking the i-th stored image of each class), so episodes here are
``open_mi``'s rules with the task's own draws (spec §1-2):

1. **Episodes**: ``open_mi``'s :func:`draw_episodes` under this task's name (balanced query
   classes over the Ravi ``test.csv`` classes, ``ways - 1`` other classes, distinct words).
2. **Support**: per (episode, class) ``shots`` images of the class in a seeded order. There is no
   query image to keep apart: the query is words.
3. **Query**: no image; ``answer`` is the class's name (:mod:`benchsmith.sources.miniimagenet.
   class_names`), ``real_label`` its wnid; its source is the class's row of ``test.csv``.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from benchsmith.builders.vlicl import FAMILY, ImageHashes, TaskRows, make_row
from benchsmith.builders.vlicl.open_mi import (
    LICENSE,
    SOURCE_SPLIT,
    URL,
    _check_capacity,
    draw_episodes,
    episode_classes,
    mini_image_ref,
    mini_source_record,
)
from benchsmith.core.hashing import sha256_file
from benchsmith.core.records import source_ref
from benchsmith.core.rng import derived_rng
from benchsmith.sources.miniimagenet.class_names import class_name, class_names
from benchsmith.sources.miniimagenet.reader import MiniImageNet

TASK = "open_t2i_mi"


def generate_prompt(word: str) -> str:
    """The original's demonstration prompt (``f"Generate a {key}"``), for demos and queries."""
    return f"Generate a {word}"


def build_open_t2i_mi(
    mini: MiniImageNet,
    *,
    episodes: int,
    ways: int,
    shots: int,
    words: tuple[str, ...],
    seed: int,
    hashes: ImageHashes,
) -> TaskRows:
    classes = episode_classes(mini, ways, TASK)
    labels = list(classes)
    plan = draw_episodes(labels, episodes, ways, words, seed, task=TASK)
    _check_capacity(mini, classes, plan, shots, query_images=False)
    names = class_names(mini.root)
    csv_record = source_ref(dataset="miniimagenet", split=SOURCE_SPLIT, id="",
                            file=mini.csv_path(SOURCE_SPLIT).name,
                            sha256=sha256_file(mini.csv_path(SOURCE_SPLIT)), license=LICENSE,
                            url=URL)  # fmt: skip
    support_rows: list[dict[str, Any]] = []
    query_rows: list[dict[str, Any]] = []
    for ep in plan:
        episode_support = []
        for position, (label, word) in enumerate(zip(ep.classes, ep.words, strict=True)):
            pool = classes[label]
            order = derived_rng(seed, FAMILY, f"{TASK}/support/{label}", ep.episode_id)
            picked = [pool[int(i)] for i in order.permutation(len(pool))[:shots]]
            ids = []
            for shot, image in enumerate(picked):
                sha = hashes(image.path)
                row = make_row(
                    TASK, "support", f"{ep.episode_id:05d}-{position}-{shot}",
                    images=[mini_image_ref(mini, image, sha)], question=generate_prompt(word),
                    answer=word,
                    extras={"episode_id": ep.episode_id, "word": word, "real_label": label,
                            "class_name": class_name(names, label, mini.root),
                            "shot_index": shot},
                    sources=[mini_source_record(mini, image, sha)],
                )  # fmt: skip
                support_rows.append(row)
                ids.append(row["id"])
            episode_support.append({"word": word, "real_label": label, "image_ids": ids})
        name = class_name(names, ep.query_class, mini.root)
        query_rows.append(make_row(
            TASK, "query", ep.episode_id, images=[], question=generate_prompt(ep.query_word),
            answer=name,
            extras={"episode_id": ep.episode_id, "classes": list(ep.words),
                    "query_word": ep.query_word, "real_label": ep.query_class,
                    "class_name": name, "episode_support": episode_support},
            sources=[{**csv_record, "id": ep.query_class}],
        ))  # fmt: skip
    support_rows.sort(key=lambda r: r["id"])
    return TaskRows(
        support_rows,
        query_rows,
        {
            "episodes": len(plan),
            "classes_available": len(labels),
            "query_classes": dict(sorted(Counter(ep.query_class for ep in plan).items())),
            "distinct_support_images": len({r["images"][0]["sha256"] for r in support_rows}),
        },
    )
