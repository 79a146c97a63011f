"""A config as the report shows it: a spread of items with their images, options and gold,
and the distributions of the gold answers, their letters and the categories."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass
class Item:
    """One sample as a card shows it."""

    sample_id: str
    question: str
    choices: list[str] | None
    gold: str
    category: str
    images: list[bytes] = field(default_factory=list)
    not_embedded: int = 0  # images the row names but the folder keeps as references


@dataclass
class ConfigItems:
    """What the report knows of one config and split."""

    config: str
    split: str
    rows: int
    items: list[Item]
    answers: Counter = field(default_factory=Counter)
    letters: Counter = field(default_factory=Counter)
    categories: Counter = field(default_factory=Counter)
    provenance_rows: int = 0


def gold_text(answer: Any) -> str:
    if isinstance(answer, list | tuple):
        return ", ".join(str(a) for a in answer)
    return "" if answer is None else str(answer)


def gold_letter(answer: Any, choices: list[str] | None) -> str | None:
    """The gold's letter among the options: the answer itself when it is a letter within
    them, else the position of the option it equals."""
    if not choices:
        return None
    text = gold_text(answer).strip()
    if len(text) == 1 and text in LETTERS[: len(choices)]:
        return text
    return LETTERS[choices.index(text)] if text in choices else None


def not_embedded(sample: Any) -> int:
    """How many of a row's images (its ``num_images``) the folder does not hold: MMIU's
    ScanNet frames are published as references, under ScanNet's terms."""
    expected = sample.row.get("num_images")
    return max(0, expected - len(sample.images)) if isinstance(expected, int) else 0


def spread_ids(ids: list[str], count: int) -> list[str]:
    """``count`` ids evenly spread over the config (first, last and between): the same items
    for the same folder, from every part of it."""
    if len(ids) <= count:
        return list(ids)
    if count <= 1:
        return ids[:count]
    step = (len(ids) - 1) / (count - 1)
    return [ids[round(k * step)] for k in range(count)]


def label_names(dataset_dir: Path, config: str, column: str | None) -> dict[int, str]:
    """A ClassLabel column's names from the card's ``dataset_info`` (MULTI's question types
    are stored as integers); {} for any other column."""
    from benchsmith.hf.reader import readme_metadata

    for entry in readme_metadata(dataset_dir).get("dataset_info") or []:
        if entry.get("config_name") != config:
            continue
        for feature in entry.get("features") or []:
            dtype = feature.get("dtype")
            if feature.get("name") == column and isinstance(dtype, dict) and "class_label" in dtype:
                return {int(k): str(v) for k, v in dtype["class_label"]["names"].items()}
    return {}


def category_of(sample: Any, column: str | None, names: dict[int, str], config: str) -> str:
    """The row's category (its subtask column, by name for a ClassLabel), else the config."""
    value = sample.row.get(column) if column else None
    if value is None or value == "":
        return config
    return names.get(value, str(value)) if isinstance(value, int) else str(value)


def read_config(
    dataset_dir: Path, config: str, split: str, columns: Any, count: int
) -> ConfigItems:
    """Every row's answer and category (no image decoded), then ``count`` items with images."""
    from benchsmith.hf.dataset_view import DatasetView

    view = DatasetView(dataset_dir, config, split, columns)
    column = view.columns.subtask
    names = label_names(Path(dataset_dir), config, column)
    facts = ConfigItems(config, split, 0, [])
    for sample in view.iter_samples(with_images=False):
        facts.rows += 1
        # one line per bar: MULTI's blanks are answered one per line ("1\n2或二")
        facts.answers[" / ".join(gold_text(sample.answer).splitlines())[:40]] += 1
        letter = gold_letter(sample.answer, sample.choices)
        if letter:
            facts.letters[letter] += 1
        facts.categories[category_of(sample, column, names, config)] += 1
        facts.provenance_rows += bool(sample.row.get("provenance"))
    wanted = spread_ids(view.sample_ids(), count)
    found = {s.sample_id: s for s in view.iter_samples(only=set(wanted))}
    facts.items = [Item(s.sample_id, s.question, s.choices, gold_text(s.answer),
                        category_of(s, column, names, config), list(s.images), not_embedded(s))
                   for i in wanted if (s := found.get(i))]  # fmt: skip
    return facts
