"""Fast Open MiniImageNet: 5-way x 5-shot episodes with nonsense-word labels (spec §2).

VL-ICL took 200 of Frozen's stored 5-way/5-shot episodes; Frozen's construction is unknown,
so we build episodes from the Ravi-Larochelle ``test.csv`` classes:

1. **Query classes** are balanced: episode ``e`` takes class ``perm_k[e mod C]`` where
   ``perm_k`` is a seeded permutation of the C test classes for cycle ``k = e // C``. Balance
   keeps the number of query images reserved per class at ceil(E / C).
2. **Other classes and words**: ``ways - 1`` further classes without replacement, a seeded
   class order, and ``ways`` distinct words drawn without replacement from the word list.
3. **Query images** are reserved first: each class's images get a seeded permutation and its
   first ``q_c`` images are the queries of the ``q_c`` episodes asking for it (episode order).
4. **Support images**: per (episode, class) ``shots`` images from the class's remaining images,
   skipping any file whose sha256 equals a query image's, so no query image (not even a byte
   copy under another name) is a support image anywhere in the task.

Every draw uses :func:`derived_rng` keyed by what is drawn, so CSV row order is irrelevant.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
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
from benchsmith.sources.miniimagenet.reader import MiniImage, MiniImageNet

TASK = "open_mi"
QUESTION = "This is a"
SOURCE_SPLIT = "test"
LICENSE = "ImageNet terms of access (non-commercial research and education)"
URL = "https://image-net.org/"


@dataclass(frozen=True)
class Episode:
    episode_id: int
    classes: tuple[str, ...]  # wnids in presentation (word) order
    words: tuple[str, ...]  # word of each class, same order
    query_class: str

    @property
    def query_word(self) -> str:
        return self.words[self.classes.index(self.query_class)]


def mini_source_record(mini: MiniImageNet, image: MiniImage, sha256: str) -> dict[str, str]:
    return source_ref(
        dataset="miniimagenet",
        split=image.split,
        id=image.filename,
        file=relative_posix(image.path, mini.root),
        sha256=sha256,
        license=LICENSE,
        url=URL,
    )


def mini_image_ref(mini: MiniImageNet, image: MiniImage, sha256: str) -> dict[str, str]:
    return image_ref("miniimagenet", relative_posix(image.path, mini.root), sha256)


def draw_episodes(
    labels: list[str], episodes: int, ways: int, words: tuple[str, ...], seed: int,
    task: str = TASK,
) -> list[Episode]:  # fmt: skip
    """Steps 1-2: classes, class order and words of every episode."""
    count = len(labels)
    out = []
    for e in range(episodes):
        cycle = derived_rng(seed, FAMILY, f"{task}/query_class_cycle", e // count)
        query_class = labels[int(cycle.permutation(count)[e % count])]
        rng = derived_rng(seed, FAMILY, f"{task}/episode", e)
        others = [label for label in labels if label != query_class]
        picked = [others[int(i)] for i in rng.choice(len(others), ways - 1, replace=False)]
        chosen = [query_class, *picked]
        ordered = tuple(chosen[int(i)] for i in rng.permutation(ways))
        named = tuple(words[int(i)] for i in rng.choice(len(words), ways, replace=False))
        out.append(Episode(e, ordered, named, query_class))
    return out


def _check_capacity(
    mini: MiniImageNet, classes: dict[str, list[MiniImage]], episodes: list[Episode], shots: int,
    query_images: bool = True,
) -> Counter:  # fmt: skip
    """Every class used must hold its reserved queries plus ``shots`` support images."""
    queries = Counter(ep.query_class for ep in episodes) if query_images else Counter()
    used = sorted({label for ep in episodes for label in ep.classes})
    for label in used:
        needed = shots + queries[label]
        have = len(classes[label])
        if have < needed:
            folder = mini.root / "images" / (label if mini.layout == "per_class" else "")
            raise PlanError(
                f"open_mi: class {label} in {mini.csv_path(SOURCE_SPLIT)} has {have} images but "
                f"its episodes need {needed} ({shots} support shots + {queries[label]} query "
                f"images); images are read from {folder}",
                path=mini.csv_path(SOURCE_SPLIT),
                fix="use a complete MiniImageNet copy (600 images per class), or lower "
                "vlicl.sizes.<profile>.open_mi.episodes / .shots in params.yaml",
            )
    return queries


def episode_classes(mini: MiniImageNet, ways: int, task: str) -> dict[str, list[MiniImage]]:
    """The ``test.csv`` classes episodes are drawn from: at least ``ways`` of them."""
    classes = mini.classes(SOURCE_SPLIT)
    if len(classes) < ways:
        raise PlanError(
            f"{task}: {SOURCE_SPLIT}.csv lists {len(classes)} classes but an episode needs "
            f"{ways} distinct classes",
            path=mini.csv_path(SOURCE_SPLIT),
            fix="use the Ravi-Larochelle test.csv (20 classes) or lower vlicl.sizes.<profile>."
            "open_mi.ways",
        )
    return classes


def build_open_mi(
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
    plan = draw_episodes(labels, episodes, ways, words, seed)
    query_counts = _check_capacity(mini, classes, plan, shots)

    # Step 3: reserve query images per class.
    query_image: dict[int, MiniImage] = {}
    pools: dict[str, list[MiniImage]] = {}
    for label in labels:
        images = classes[label]
        order = derived_rng(seed, FAMILY, f"{TASK}/class_images/{label}", 0).permutation(
            len(images)
        )
        shuffled = [images[int(i)] for i in order]
        asking = [ep.episode_id for ep in plan if ep.query_class == label]
        for episode_id, image in zip(asking, shuffled, strict=False):
            query_image[episode_id] = image
        pools[label] = sorted(shuffled[query_counts[label] :], key=lambda im: im.filename)
    query_shas = {hashes(image.path) for image in query_image.values()}

    # Step 4: support images, never byte-equal to any query image.
    support_rows: list[dict[str, Any]] = []
    query_rows: list[dict[str, Any]] = []
    skipped_duplicates = 0
    for ep in plan:
        episode_support = []
        for position, (label, word) in enumerate(zip(ep.classes, ep.words, strict=True)):
            pool = pools[label]
            rng = derived_rng(seed, FAMILY, f"{TASK}/support/{label}", ep.episode_id)
            picked: list[tuple[MiniImage, str]] = []
            for i in rng.permutation(len(pool)):
                image = pool[int(i)]
                sha = hashes(image.path)
                if sha in query_shas:
                    skipped_duplicates += 1
                    continue
                picked.append((image, sha))
                if len(picked) == shots:
                    break
            if len(picked) < shots:
                raise PlanError(
                    f"open_mi: class {label} has only {len(picked)} images that are not byte "
                    f"copies of a query image, {shots} needed (images in {mini.root / 'images'})",
                    path=mini.csv_path(SOURCE_SPLIT),
                    fix="remove duplicate images from the MiniImageNet copy or lower the shots",
                )
            ids = []
            for shot, (image, sha) in enumerate(picked):
                row = make_row(
                    TASK,
                    "support",
                    f"{ep.episode_id:05d}-{position}-{shot}",
                    images=[mini_image_ref(mini, image, sha)],
                    question=QUESTION,
                    answer=word,
                    extras={
                        "episode_id": ep.episode_id,
                        "word": word,
                        "real_label": label,
                        "shot_index": shot,
                    },
                    sources=[mini_source_record(mini, image, sha)],
                )
                support_rows.append(row)
                ids.append(row["id"])
            episode_support.append({"word": word, "real_label": label, "image_ids": ids})
        image = query_image[ep.episode_id]
        sha = hashes(image.path)
        query_rows.append(
            make_row(
                TASK,
                "query",
                ep.episode_id,
                images=[mini_image_ref(mini, image, sha)],
                question=QUESTION,
                answer=ep.query_word,
                extras={
                    "episode_id": ep.episode_id,
                    "classes": list(ep.words),
                    "query_word": ep.query_word,
                    "real_label": ep.query_class,
                    "episode_support": episode_support,
                },
                sources=[mini_source_record(mini, image, sha)],
            )
        )
    assert_query_not_in_support(support_rows, query_rows)
    support_rows.sort(key=lambda r: r["id"])
    return TaskRows(
        support_rows,
        query_rows,
        {
            "episodes": len(plan),
            "classes_available": len(labels),
            "query_images_per_class": dict(sorted(query_counts.items())),
            "distinct_support_images": len({r["images"][0]["sha256"] for r in support_rows}),
            "support_candidates_skipped_as_query_copies": skipped_duplicates,
        },
    )


def assert_query_not_in_support(support: list[dict], query: list[dict]) -> None:
    """The task's guarantee, checked on the rows themselves (by image sha256)."""
    support_shas = {ref["sha256"] for row in support for ref in row["images"]}
    leaked = [row["id"] for row in query if row["images"][0]["sha256"] in support_shas]
    if leaked:
        raise PlanError(f"open_mi: query images also used as support images: {leaked[:5]}")
