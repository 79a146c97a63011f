"""MULTI-Extend: the knowledge pieces, with their images, linked to the questions that use them.

A question links to the piece its problem's first knowledge keyword names (spec section 3);
``question_ids`` lists the selected questions that link to each piece, so a run can append the
piece after a question as the paper's "reference material, which may be wrong".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchsmith.core.hashing import sha256_file
from benchsmith.sources.exams.release import KNOWLEDGE_GLOB, image_relative, load_json, newest


def extend_rows(release_root: Path, questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    path = newest(release_root, KNOWLEDGE_GLOB)
    if path is None:
        return []
    knowledge = load_json(path, "knowledge file")
    linked: dict[str, list[str]] = {}
    for row in questions:
        if row["knowledge"]:
            linked.setdefault(row["knowledge"][0], []).append(row["question_id"])
    sha = sha256_file(path)
    rows = []
    for key in knowledge:
        entry = knowledge[key]
        files = [image_relative(p) for p in entry.get("knowledge_images") or []]
        shas = [sha256_file(release_root / f) for f in files]
        rows.append({
            "knowledge_key": key,
            "knowledge": str(entry.get("knowledge") or key),
            "content": str(entry.get("knowledge_content") or ""),
            "image_paths": files,
            "image_sha256": shas,
            "question_ids": linked.get(key, []),
            "sources": [
                {"dataset": "multi-release", "split": "knowledge", "id": key, "file": path.name,
                 "sha256": sha},
                *({"dataset": "multi-release", "split": "image", "id": f"IMAGE_{k}", "file": f,
                   "sha256": s} for k, (f, s) in enumerate(zip(files, shas, strict=False), start=1)),
            ],
        })  # fmt: skip
    return rows
