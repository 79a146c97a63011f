"""Publish a MULTI plan (the ``select`` step's folder) as a versioned dataset folder.

``OUT/data/questions/test-*.parquet``, ``OUT/data/elite/test-*.parquet`` (the questions marked
Elite) and ``OUT/data/extend/test-*.parquet``; ``OUT/removed.jsonl`` is the decision log of
every question the build removed (near duplicates, unselected problems) with its reason.
Every image is read from its recorded root and checked against the sha256 the plan recorded, so
a source changed since the build is an error naming the file.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import datasets
import PIL

from benchsmith import __version__
from benchsmith.builders.multi.config import EDUCATION, IMAGE_CLASSES, QUESTION_TYPES, TRACKS
from benchsmith.builders.multi.features import ELITE, EXTEND, QUESTIONS, SPLIT, features_for
from benchsmith.builders.multi.plan import QuestionsDir
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import sha256_bytes
from benchsmith.core.progress import log
from benchsmith.core.records import provenance
from benchsmith.family.base import Card, ConfigSpec, Publication
from benchsmith.hf.batches import batches_by_image_bytes
from benchsmith.hf.image_names import neutral_image_name, source_extension
from benchsmith.hf.layout import SplitWritten

BATCH_ROWS = 256
CHANGED_FIX = "the source changed since the build: rerun `dvc repro` (or the build steps)"


def read_image(roots: Mapping[str, str], root: str, file: str, sha256: str) -> dict[str, Any]:
    path = Path(roots[root]) / file
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise BenchsmithError(f"image unreadable: {exc}", path=path, fix=CHANGED_FIX) from exc
    if sha256_bytes(data) != sha256:
        raise BenchsmithError("image differs from the one the build recorded", path=path,
                              fix=CHANGED_FIX)  # fmt: skip
    return {"bytes": data, "path": neutral_image_name(data, source_extension(file))}


def row_provenance(row: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
    return provenance(family="multi", params_hash=info["params_hash"], seed=int(info["seed"]),
                      sources=row["sources"], decisions=row["decisions"],
                      builder_version=str(info.get("builder_version", __version__)))  # fmt: skip


def published_question(row: dict[str, Any], info: dict[str, Any],
                       roots: Mapping[str, str]) -> dict[str, Any]:  # fmt: skip
    images = [read_image(roots, row["source_root"], f, s)
              for f, s in zip(row["image_paths"], row["image_sha256"], strict=False)]  # fmt: skip
    return {
        **{key: row[key] for key in (
            "question_id", "problem_id", "sub_index", "subject_code", "subject", "education",
            "track", "question_type", "problem_content", "question_content", "text", "answer",
            "answer_blanks", "points", "analysis", "knowledge", "image_paths", "image_numbers",
            "num_images", "image_class", "image_in_choice", "difficulty", "quality", "in_elite",
            "source_kind", "source_version", "flags")},
        "education": EDUCATION.index(row["education"]),
        "track": TRACKS.index(row["track"]),
        "question_type": QUESTION_TYPES.index(row["question_type"]),
        "image_class": IMAGE_CLASSES.index(row["image_class"]),
        "options": row["options"] or [],
        "images": images,
        "provenance": row_provenance(row, info),
    }  # fmt: skip


def published_extend(row: dict[str, Any], info: dict[str, Any],
                     roots: Mapping[str, str]) -> dict[str, Any]:  # fmt: skip
    return {
        "knowledge_key": row["knowledge_key"],
        "knowledge": row["knowledge"],
        "content": row["content"],
        "images": [read_image(roots, "release", f, s)
                   for f, s in zip(row["image_paths"], row["image_sha256"], strict=False)],
        "image_paths": row["image_paths"],
        "question_ids": row["question_ids"],
        "provenance": row_provenance({**row, "decisions": []}, info),
    }  # fmt: skip


def expected_rows(plan: QuestionsDir) -> Iterator[tuple[str, dict[str, Any]]]:
    """(config, published row) for every row publish writes, in order (the audit's reference)."""
    for row in plan.rows():
        published = published_question(row, plan.info, plan.roots)
        yield QUESTIONS, published
        if row["in_elite"]:
            yield ELITE, published
    for row in plan.rows("extend.jsonl"):
        yield EXTEND, published_extend(row, plan.info, plan.roots)


def batched(rows: Iterable[dict[str, Any]], max_bytes: int) -> Iterator[list[dict[str, Any]]]:
    return batches_by_image_bytes(rows, max_bytes, BATCH_ROWS)


class MultiPublication(Publication):
    family = "multi"
    card_template = "multi.md.j2"
    audit_how = (
        "the questions and select steps are re-run from the recorded release and converted pages "
        "with the recorded parameters and every column compared; every image is re-read and "
        "checked by sha256 (OCR output is a recorded source, hashed, not re-OCR'd)"
    )

    def __init__(self, plan_dir: str | Path, roots_override: Mapping[str, str] | None = None):
        self.plan = QuestionsDir.read(plan_dir, "select", roots_override)
        self.counts: dict[str, Counter] = {}

    def input_paths(self) -> list[Path]:
        return [self.plan.path, *(Path(r) for r in self.plan.roots.values())]

    def configs(self) -> Iterator[ConfigSpec]:
        for config in (QUESTIONS, ELITE, EXTEND):
            yield ConfigSpec(config, features_for(config), (SPLIT,),
                             lambda split, max_bytes, c=config: self._batches(c, max_bytes))  # fmt: skip

    def _rows(self, config: str) -> Iterator[dict[str, Any]]:
        if config == EXTEND:
            for row in self.plan.rows("extend.jsonl"):
                yield published_extend(row, self.plan.info, self.plan.roots)
            return
        counter = self.counts.setdefault(config, Counter())
        for row in self.plan.rows():
            if config == ELITE and not row["in_elite"]:
                continue
            counter[(row["question_type"], row["education"], row["image_class"])] += 1
            yield published_question(row, self.plan.info, self.plan.roots)

    def _batches(self, config: str, max_bytes: int) -> Iterator[list[dict[str, Any]]]:
        log(f"multi publish: {config}")
        return batched(self._rows(config), max(256 * 1024, max_bytes // 4))

    def write_extra(self, staging: Path) -> dict[str, Any]:
        shutil.copyfile(self.plan.path / "removed.jsonl", staging / "removed.jsonl")
        return {"decision_log": "removed.jsonl"}

    def build_info(self, written: list[SplitWritten]) -> dict[str, Any]:
        info = self.plan.info
        breakdown = {config: {"type": dict(Counter(k[0] for k in c.elements())),
                              "education": dict(Counter(k[1] for k in c.elements())),
                              "image_class": dict(Counter(k[2] for k in c.elements()))}
                     for config, c in self.counts.items()}  # fmt: skip
        return {
            "builder_version": info.get("builder_version"),
            "libraries": {"pillow": PIL.__version__, "datasets": datasets.__version__},
            "params": info["config"],
            "params_hash": info["params_hash"],
            "seed": info["seed"],
            "roots": dict(self.plan.roots),
            "files": info["files"],
            "counts": info["counts"],
            "source_kinds": info.get("source_kinds", {}),
            "near_duplicates": info["near_duplicates"],
            "selection": info["selection"],
            "elite": {k: v for k, v in info["elite"].items() if k != "ids"},
            "elite_ids": info["elite"].get("ids", []),
            "breakdown": breakdown,
            "ocr": info.get("ocr") or {},
            "plan_fingerprint": params_hash_of(self.plan),
        }

    def card(self, info: dict[str, Any], written: list[SplitWritten]) -> Card:
        from benchsmith.builders.multi.card import multi_card

        return multi_card(info)

    def summary(self, info: dict[str, Any]) -> str:
        counts = info["counts"]
        return (f"multi publish: {counts['selected']} questions, {counts['elite']} Elite, "
                f"{counts['extend']} knowledge pieces")  # fmt: skip


def params_hash_of(plan: QuestionsDir) -> str:
    return plan.fingerprint()
