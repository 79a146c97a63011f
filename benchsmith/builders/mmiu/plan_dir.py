"""The MMIU plan folder, read back by the shortcut check, publish and the audit.

``build_info.json`` records the source roots relative to the plan folder; ``roots`` resolves
them (``--root NAME=DIR`` overrides one), and :meth:`MmiuPlanDir.image_sources` opens them for
rendering.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.builders.mmiu.images import ImageSources
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import params_hash, sha256_file
from benchsmith.core.json_files import read_jsonl
from benchsmith.hf.roots import resolve_roots

REBUILD = "rerun `benchsmith build mmiu plan`"


@dataclass(frozen=True)
class MmiuPlanDir:
    path: Path
    info: dict[str, Any]
    roots: dict[str, str]

    @classmethod
    def read(cls, path: str | Path, roots_override: Mapping[str, str] | None = None):
        path = Path(path)
        info_path = path / "build_info.json"
        if not info_path.is_file():
            raise BenchsmithError(
                "no build_info.json in the MMIU plan folder",
                path=path,
                fix="run `benchsmith build mmiu plan --out DIR` first",
            )
        info = json.loads(info_path.read_text(encoding="utf-8"))
        if info.get("family") != "mmiu":
            raise BenchsmithError(f"plan family is {info.get('family')!r}, not 'mmiu'",
                                  path=info_path, fix=REBUILD)  # fmt: skip
        return cls(path, info, resolve_roots(info.get("roots"), path, roots_override))

    @property
    def tasks(self) -> list[str]:
        return list(self.info.get("counts") or {})

    def rows_path(self, task: str) -> Path:
        return self.path / "items" / f"{task}.jsonl"

    def rows(self, task: str) -> Iterator[dict[str, Any]]:
        for _, row in read_jsonl(self.rows_path(task), what="plan items", fix=REBUILD):
            yield row

    def fingerprint(self) -> str:
        files = ["build_info.json"] + [f"items/{t}.jsonl" for t in self.tasks]
        return params_hash({f: sha256_file(self.path / f) for f in files})

    def image_sources(self) -> ImageSources:
        scannet, coco, release = (self.roots.get(k) for k in ("scannet", "coco", "release"))
        return ImageSources(
            scannet=Path(scannet) if scannet else None,
            coco_images=Path(coco) / "val2014" if coco else None,
            release=Path(release) if release else None,
        )

    @property
    def mode(self) -> str:
        return str(self.info.get("mode", "rebuild"))
