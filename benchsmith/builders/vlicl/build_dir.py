"""The VL-ICL build directory reader shared by the leakage stage, publish and audit.

A build directory (``notes/vlicl_plan_format.md``) holds ``build_info.json``, the task JSONL
files ``tasks/<task>/{support,query}.jsonl``, ``episodes.jsonl`` and the rendered images.
Rows name their images by ``(root, file, sha256)``; :func:`resolve_roots` turns the recorded
roots (plus any overrides) into folders, and :meth:`VliclBuildDir.read_image` checks every file
against the sha256 recorded when the build was made, so a changed source is an error naming it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.builders.vlicl import SPLITS
from benchsmith.core.errors import BenchsmithError, SourceError
from benchsmith.core.hashing import params_hash, sha256_bytes, sha256_file
from benchsmith.core.json_files import read_jsonl

_REBUILD = "rerun `benchsmith build vlicl plan` to rewrite the build directory"


def _read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    for _, row in read_jsonl(path, what="plan rows", fix=_REBUILD):
        yield row


@dataclass(frozen=True)
class VliclBuildDir:
    """A build directory: ``build_info.json``, task JSONL files, episodes, rendered images."""

    path: Path
    info: dict[str, Any]
    roots: dict[str, Path | None]

    @classmethod
    def read(cls, path: str | Path, roots_override: Mapping[str, Any] | None = None):
        path = Path(path)
        info_path = path / "build_info.json"
        if not info_path.is_file():
            raise BenchsmithError(
                "no build_info.json in the VL-ICL build folder",
                path=path,
                fix="run `benchsmith build vlicl plan --out DIR` first",
            )
        info = json.loads(info_path.read_text(encoding="utf-8"))
        if info.get("family") != "vlicl":
            raise BenchsmithError(
                f"build family is {info.get('family')!r}, not 'vlicl'", path=info_path
            )
        return cls(path, info, resolve_roots(info.get("roots", {}), path, roots_override))

    @property
    def tasks(self) -> list[str]:
        return list(self.info.get("counts") or {})

    def rows_path(self, task: str, split: str) -> Path:
        return self.path / "tasks" / task / f"{split}.jsonl"

    def rows(self, task: str, split: str) -> Iterator[dict[str, Any]]:
        return _read_jsonl(self.rows_path(task, split))

    def episodes(self) -> Iterator[dict[str, Any]]:
        return _read_jsonl(self.path / "episodes.jsonl")

    def image_path(self, ref: Mapping[str, str]) -> Path:
        root = self.roots.get(ref["root"])
        if root is None:
            raise SourceError(
                f"image root {ref['root']!r} is not set in build_info.json roots",
                path=self.path / "build_info.json",
                fix=f"pass the {ref['root']} folder explicitly, or rebuild with it",
            )
        return root / ref["file"]

    def read_image(self, ref: Mapping[str, str]) -> bytes:
        """The file's bytes, verified against the sha256 recorded when the build was made."""
        path = self.image_path(ref)
        if not path.is_file():
            raise SourceError("source image missing", path=path, fix=restore_fix(ref))
        data = path.read_bytes()
        if sha256_bytes(data) != ref["sha256"]:
            raise SourceError(
                f"source image changed since the build (sha256 {sha256_bytes(data)[:12]} != "
                f"recorded {ref['sha256'][:12]})",
                path=path,
                fix=restore_fix(ref),
            )
        return data

    def fingerprint(self) -> str:
        """Hash of everything leakage and publish read, so a stale leakage.json is caught."""
        files = ["build_info.json", "episodes.jsonl"] + [
            f"tasks/{t}/{s}.jsonl" for t in self.tasks for s in SPLITS
        ]
        return params_hash({f: sha256_file(self.path / f) for f in files})


def restore_fix(ref: Mapping[str, str]) -> str:
    """The fix for a missing or changed source image: its root names what to restore."""
    return f"restore the original {ref['root']} source file, or rebuild (`benchsmith build vlicl plan`)"


def resolve_roots(
    recorded: Mapping[str, Any], build_dir: Path, override: Mapping[str, Any] | None = None
) -> dict[str, Path | None]:
    """Absolute root folders: overrides win; ``rendered`` and relative paths resolve sensibly.

    Relative roots are project-relative (the folder DVC runs in); if that does not exist, they
    are tried relative to the build folder. ``rendered`` is always inside the build folder.
    """
    out: dict[str, Path | None] = {}
    for name, value in {**recorded, **(override or {})}.items():
        if value is None:
            out[name] = None
            continue
        path = Path(value)
        in_build = name == "rendered" and name not in (override or {})
        if not path.is_absolute() and (in_build or not path.exists()):
            path = build_dir / path if in_build or (build_dir / path).exists() else path
        out[name] = path.absolute()
    return out
