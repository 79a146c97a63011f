"""Ingest the official VL-ICL release into the same build-directory rows (``mode: ingest``).

Release layout (Hugging Face ``ys-zong/VL-ICL``)::

    ROOT/<task>/support.json  ROOT/<task>/query.json     lists of dicts, file order kept
    ROOT/<task>/support.zip   ROOT/<task>/query.zip      images

The JSON names images relative to ROOT; :mod:`.ingest_images` finds them (extracting the
zips when needed). This module turns each task's JSON entries into build-directory rows.

Row ids are file positions, so the legacy sampler walks queries in the release's file order.
The text-to-image tasks (CoBSAT, the fast T2I tasks, ``open_t2i_mi``) are read by
:mod:`.ingest_t2i`.
Fields the release does not carry (MiniImageNet class of matching pairs, CLEVR scene when the
file name does not say) are empty strings / -1 and counted in the stats.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path, PurePosixPath
from typing import Any

from benchsmith.builders.vlicl import ImageHashes, TaskRows, make_row
from benchsmith.builders.vlicl.clevr_count import ATTRIBUTES
from benchsmith.builders.vlicl.config import OPERATOR_TASKS
from benchsmith.builders.vlicl.ingest_images import (
    RELEASE_FIX,
    ReleaseImages,
    as_list,
    referenced_images,
)
from benchsmith.builders.vlicl.ingest_images import ImageResolver as ImageResolver  # re-export
from benchsmith.builders.vlicl.ingest_t2i import T2I_EPISODE_TASKS, cobsat_rows, t2i_episode_rows
from benchsmith.builders.vlicl.operators import OPERATOR_NAMES, answers_by_op
from benchsmith.core.errors import SourceError

_CLEVR_NAME = re.compile(r"CLEVR_(train|val|test)_(\d+)")
_DIGIT_RUNS = re.compile(r"\d+")


def _load_list(path: Path) -> list[Any]:
    if not path.is_file():
        raise SourceError(f"VL-ICL release file not found: {path.name}", path=path, fix=RELEASE_FIX)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SourceError(
            f"{path.name} is not valid JSON ({exc})", path=path, fix=RELEASE_FIX
        ) from exc
    if not isinstance(data, list) or not all(isinstance(e, dict) for e in data):
        raise SourceError(f"{path.name} must be a list of objects", path=path, fix=RELEASE_FIX)
    return data


def _entry_id(entry: dict, k: int) -> str:
    return str(entry.get("id", k))


def _operands(
    entry: dict, paths: list[str], answer: Any, operator: str | None
) -> tuple[int, int] | None:
    """(a, b) from explicit keys, from the [+, -, x] answer list, or from two digits in the
    image names, accepted only when consistent with the stored answer."""
    if isinstance(entry.get("a"), int) and isinstance(entry.get("b"), int):
        return entry["a"], entry["b"]
    if isinstance(answer, list) and len(answer) == 3 and all(isinstance(v, int) for v in answer):
        plus, minus, times = answer
        if (plus + minus) % 2 == 0:
            a, b = (plus + minus) // 2, (plus - minus) // 2
            if a * b == times:
                return a, b
    digits = [run for p in paths for run in _DIGIT_RUNS.findall(PurePosixPath(p).stem)]
    if len(digits) >= 2 and all(len(d) == 1 for d in digits[-2:]):
        a, b = int(digits[-2]), int(digits[-1])
        if operator is not None and str(answers_by_op(a, b)[OPERATOR_NAMES[operator]]) != str(
            answer
        ):
            return None
        return a, b
    return None


def _operator_rows(
    task: str, split: str, entries: list[dict], images: ReleaseImages, where: Path, stats: Counter
) -> list[dict]:
    rows = []
    for k, entry in enumerate(entries):
        paths = as_list(entry.get("image"))
        operator = entry.get("operator") if split == "query" else None
        if split == "query" and operator not in OPERATOR_NAMES:
            raise SourceError(
                f"{where.name}[{k}]: operator {operator!r} is not one of + - x",
                path=where,
                fix=RELEASE_FIX,
            )
        answer = entry.get("answer")
        operands = _operands(entry, paths, answer, operator)
        if operands is None:
            stats[f"{split}_without_operands"] += 1
            a, b, by_op = -1, -1, {"plus": 0, "minus": 0, "times": 0}
            if isinstance(answer, list) and len(answer) == 3:
                by_op = dict(zip(("plus", "minus", "times"), (int(v) for v in answer), strict=True))
        else:
            a, b = operands
            by_op = answers_by_op(a, b)
        if split == "query":
            scalar = (
                answer[list(OPERATOR_NAMES).index(operator)] if isinstance(answer, list) else answer
            )
        else:
            scalar = answer[0] if isinstance(answer, list) else answer
        refs, sources = images.refs(paths, split, _entry_id(entry, k), where)
        rows.append(
            make_row(
                task,
                split,
                k,
                images=refs,
                question=str(entry.get("question", "")),
                answer=scalar,
                extras={"a": a, "b": b, "answers_by_op": by_op, "operator": operator},
                sources=sources,
            )
        )
    return rows


def _int_answer(entry: dict, k: int, where: Path) -> int:
    try:
        return int(entry.get("answer"))  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        raise SourceError(
            f"{where.name}[{k}]: answer {entry.get('answer')!r} is not an integer count",
            path=where,
            fix=RELEASE_FIX,
        ) from exc


def _clevr_rows(
    split: str, entries: list[dict], images: ReleaseImages, where: Path, stats: Counter
) -> list[dict]:
    rows = []
    for k, entry in enumerate(entries):
        question = str(entry.get("question", ""))
        attribute, _, value = (part.strip() for part in question.partition(":"))
        if attribute not in ATTRIBUTES or not value:
            raise SourceError(
                f"{where.name}[{k}]: question {question!r} is not '<attribute>: <value>'",
                path=where,
                fix=RELEASE_FIX,
            )
        paths = as_list(entry.get("image"))
        match = _CLEVR_NAME.search(paths[0] if paths else "")
        if match is None:
            stats[f"{split}_without_scene"] += 1
        count = _int_answer(entry, k, where)
        refs, sources = images.refs(paths, split, _entry_id(entry, k), where)
        rows.append(
            make_row(
                "clevr",
                split,
                k,
                images=refs,
                question=question,
                answer=count,
                extras={
                    "attribute": attribute,
                    "value": value,
                    "count": count,
                    "source_split": match.group(1) if match else "",
                    "scene_index": int(match.group(2)) if match else -1,
                    "value_present": count > 0,
                },
                sources=sources,
            )
        )
    return rows


def _matching_rows(
    split: str, entries: list[dict], images: ReleaseImages, where: Path
) -> list[dict]:
    rows = []
    for k, entry in enumerate(entries):
        items = (
            [("same", entry.get("same")), ("different", entry.get("diff"))]
            if split == "support"
            else [(None, entry)]
        )
        for offset, (label, item) in enumerate(items):
            if not isinstance(item, dict):
                raise SourceError(
                    f"{where.name}[{k}] lacks its {label} pair", path=where, fix=RELEASE_FIX
                )
            answer = str(item.get("answer", ""))
            label = label or ("same" if answer.strip().lower().startswith("yes") else "different")
            refs, sources = images.refs(
                as_list(item.get("image")), split, _entry_id(entry, k), where
            )
            index = 2 * k + offset if split == "support" else k
            rows.append(
                make_row(
                    "matching_mi",
                    split,
                    index,
                    images=refs,
                    question=str(item.get("question", "")),
                    answer=answer,
                    extras={"group_id": k, "label": label, "class_a": "", "class_b": ""},
                    sources=sources,
                )
            )
    return rows


def _open_mi_rows(
    entries: list[dict], images: ReleaseImages, where: Path
) -> tuple[list[dict], list[dict]]:
    """Support rows are the episodes stored inside each query (the release keeps them there)."""
    support, query = [], []
    for k, entry in enumerate(entries):
        word, classes, stored = (
            entry.get("answer"),
            list(entry.get("classes") or []),
            entry.get("support") or {},
        )
        if word not in classes or any(c not in stored for c in classes):
            raise SourceError(
                f"{where.name}[{k}]: answer, classes and support words disagree",
                path=where,
                fix=RELEASE_FIX,
            )
        episode_support = []
        for position, cls in enumerate(classes):
            ids = []
            for shot, path in enumerate(as_list(stored[cls].get("images"))):
                refs, sources = images.refs([path], "support", _entry_id(entry, k), where)
                row = make_row(
                    "open_mi",
                    "support",
                    f"{k:05d}-{position}-{shot}",
                    images=refs,
                    question="This is a",
                    answer=cls,
                    extras={
                        "episode_id": k,
                        "word": cls,
                        "real_label": str(stored[cls].get("real_name", "")),
                        "shot_index": shot,
                    },
                    sources=sources,
                )
                support.append(row)
                ids.append(row["id"])
            episode_support.append(
                {"word": cls, "real_label": str(stored[cls].get("real_name", "")), "image_ids": ids}
            )
        refs, sources = images.refs(
            as_list(entry.get("image")), "query", _entry_id(entry, k), where
        )
        query.append(
            make_row(
                "open_mi",
                "query",
                k,
                images=refs,
                question=str(entry.get("question", "This is a")),
                answer=word,
                extras={
                    "episode_id": k,
                    "classes": classes,
                    "query_word": word,
                    "real_label": str(stored[word].get("real_name", "")),
                    "episode_support": episode_support,
                },
                sources=sources,
            )
        )
    return sorted(support, key=lambda r: r["id"]), query


TEXTOCR_NUMBERS = {"area": -1.0, "img_w": -1, "img_h": -1}


def _textocr_rows(
    split: str, entries: list[dict], images: ReleaseImages, where: Path, stats: Counter
) -> list[dict]:
    """TextOCR rows: one image with a red box, the question and the word in the box. The
    annotation fields the rebuild records (``bbox``, ``points``, ``area``, ``img_w``, ``img_h``,
    the TextOCR image and annotation ids) are kept when the release entry has them, else empty
    or -1 and counted, never guessed."""
    rows = []
    for k, entry in enumerate(entries):
        paths, answer = as_list(entry.get("image")), entry.get("answer")
        if len(paths) != 1 or not isinstance(answer, str) or not answer:
            raise SourceError(f"{where.name}[{k}]: a TextOCR item needs one image and a word "
                              f"answer, got {len(paths)} image(s) and {answer!r}",
                              path=where, fix=RELEASE_FIX)  # fmt: skip
        extras: dict[str, Any] = {
            "bbox": [float(v) for v in entry.get("bbox") or []],
            "points": [float(v) for v in entry.get("points") or []],
            **{
                name: default if entry.get(name) is None else type(default)(entry[name])
                for name, default in TEXTOCR_NUMBERS.items()
            },  # fmt: skip
            "textocr_img_id": str(entry.get("textocr_img_id", entry.get("image_id", ""))),
            "ann_id": str(entry.get("ann_id", "")),
        }
        if not extras["bbox"] or not extras["ann_id"]:
            stats[f"{split}_without_annotation"] += 1
        refs, sources = images.refs(paths, split, _entry_id(entry, k), where)
        rows.append(make_row("textocr", split, k, images=refs,
                             question=str(entry.get("question", "")), answer=answer,
                             extras=extras, sources=sources))  # fmt: skip
    return rows


def ingest_task(
    root: str | Path, task: str, hashes: ImageHashes, images_root: str | Path | None = None
) -> TaskRows:
    """Rows of one task. Images are looked up (and zips extracted) under ``images_root``
    (default: the release ``root`` itself, like ``unzip.sh``); pass a separate folder to leave
    the release folder untouched (e.g. when it is a DVC dependency). ImageRefs are relative to
    ``images_root``, which is therefore build_info's ``roots["ingest"]``."""
    root = Path(root)
    query_path, support_path = root / task / "query.json", root / task / "support.json"
    query_entries = _load_list(query_path)
    # open_mi and the 2-way text-to-image tasks keep their episodes inside each query
    stored_inside = task == "open_mi" or task in T2I_EPISODE_TASKS
    support_entries = [] if stored_inside else _load_list(support_path)
    images = ReleaseImages(
        root, Path(images_root) if images_root is not None else root, task, hashes
    )
    images.ensure(referenced_images(task, "query", query_entries), query_path)
    images.ensure(referenced_images(task, "support", support_entries), support_path)
    stats: Counter = Counter()
    if task == "open_mi":
        support, query = _open_mi_rows(query_entries, images, query_path)
    elif task == "matching_mi":
        support = _matching_rows("support", support_entries, images, support_path)
        query = _matching_rows("query", query_entries, images, query_path)
    elif task == "clevr":
        support = _clevr_rows("support", support_entries, images, support_path, stats)
        query = _clevr_rows("query", query_entries, images, query_path, stats)
    elif task in OPERATOR_TASKS:
        support = _operator_rows(task, "support", support_entries, images, support_path, stats)
        query = _operator_rows(task, "query", query_entries, images, query_path, stats)
    elif task == "textocr":
        support = _textocr_rows("support", support_entries, images, support_path, stats)
        query = _textocr_rows("query", query_entries, images, query_path, stats)
    elif task == "cobsat":
        support = cobsat_rows("support", support_entries, images, support_path, stats)
        query = cobsat_rows("query", query_entries, images, query_path, stats)
    elif task in T2I_EPISODE_TASKS:
        support, query = t2i_episode_rows(task, query_entries, images, query_path)
    else:
        raise SourceError(
            f"ingest does not handle task {task!r}",
            fix="ingest the five image-to-text tasks, textocr, open_t2i_mi, cobsat or the "
            "fast T2I tasks",
        )
    return TaskRows(
        support, query, {**dict(sorted(stats.items())), "extracted_zips": images.extracted}
    )
