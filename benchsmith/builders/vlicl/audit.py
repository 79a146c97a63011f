"""VL-ICL's audit hook: re-derive a published row from its sources.

The one audit (:mod:`benchsmith.publish.audit`) has already checked every source file of the
row against its recorded sha256. Here, for a task row:

* every embedded image has exactly the bytes of its source file (the image's ``path`` is
  ``<root>/<file>``) and the sha256 the provenance records for it;
* rendered operator images re-render byte-identically from ``a``/``b`` with the recorded font
  (whose sha256 must match, so a different Pillow or font is caught, not silently accepted);
* CLEVR answers recount from the scenes JSON (``count(obj[attribute] == value)``);

and, in a whole-dataset audit, every episode names published query and support ids.

Roots come from ``build_info.json``; ``audit --root NAME=DIR`` replaces any of them
(``miniimagenet``, ``clevr``, ``ingest``, and ``font`` for a TTF path) when sources moved.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchsmith.builders.base import AuditReport, RowAuditor
from benchsmith.builders.vlicl.build_dir import resolve_roots
from benchsmith.builders.vlicl.features import CLEVR_ATTRIBUTES, EPISODES_CONFIG, SPLITS
from benchsmith.builders.vlicl.operator_images import (
    load_operator_font,
    render_expression,
    render_operand,
)
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import sha256_bytes
from benchsmith.hf.reader import read_columns
from benchsmith.sources.clevr.reader import read_clevr_scenes

# provenance ``sources.dataset`` -> the root its ``file`` is relative to
DATASET_ROOTS = {"miniimagenet": "miniimagenet", "clevr": "clevr", "vl-icl": "ingest"}
RENDERED = "rendered"
ROOT_NAMES = ("miniimagenet", "clevr", "ingest", "font")


class OperatorFont:
    """The recorded operator font, loaded once; ``failure`` says why it cannot be used."""

    def __init__(self, recorded: dict[str, Any] | None, override: str | None):
        self.recorded = recorded or {}
        self.override = override
        self._font: Any = None
        self.failure: str | None = None

    def get(self) -> Any:
        if self._font is None and self.failure is None:
            source = self.override or self.recorded.get("source") or ""
            try:
                path = None if source.startswith("pillow-embedded") else source
                self._font, identity = load_operator_font(path)
            except BenchsmithError as exc:
                self.failure = f"operator font cannot be loaded: {exc}"
                return None
            if identity.sha256 != self.recorded.get("sha256"):
                self.failure = (
                    f"operator font differs (sha256 {identity.sha256[:12]} != recorded "
                    f"{str(self.recorded.get('sha256'))[:12]}): {identity.source}"
                )
                self._font = None
        return self._font


def _recorded_sha(row: dict[str, Any], root: str, file: str) -> str | None:
    for source in row["provenance"]["sources"]:
        if source["file"] in (file, f"{root}/{file}"):
            return source["sha256"]
    return None


def _rendered_bytes(row: dict[str, Any], index: int, font: Any) -> bytes:
    a, b = int(row["a"]), int(row["b"])
    if row["task"] == "operator_induction_interleaved":
        return render_operand((a, b)[index], font)
    return render_expression(a, b, font)


class VliclAuditor(RowAuditor):
    def __init__(self, dataset_dir: Path, info: dict[str, Any], roots: Mapping[str, str]):
        self.dataset_dir = dataset_dir
        override = dict(roots)
        font_path = override.pop("font", None)
        self.roots = resolve_roots(info.get("roots", {}), dataset_dir, override)
        self.font = OperatorFont(info.get("font"), str(font_path) if font_path else None)
        self.tasks = list(info.get("counts", {}))
        self._scenes: dict[tuple[Path, str], dict[int, list[dict]]] = {}
        self._episodes: list[tuple[str, str, str, list[str], Path]] = []

    def id_column(self, config: str) -> str | None:
        return None if config == EPISODES_CONFIG else "id"

    def _path(self, root: str, file: str) -> Path | None:
        base = self.roots.get(root)
        return None if base is None else base / file

    def source_path(self, source: Mapping[str, Any]) -> Path | None:
        root = DATASET_ROOTS.get(source["dataset"])
        return None if root is None else self._path(root, source["file"])

    def audit_row(self, config: str, split: str, row: dict[str, Any], report: AuditReport) -> None:
        if config == EPISODES_CONFIG:
            self._episodes.append(
                (split, row["task"], row["query_id"], list(row["demo_ids"]), self.dataset_dir)
            )
            return
        for source in row["provenance"]["sources"]:
            if source["dataset"] == RENDERED:
                continue  # a rendered image has no file to read: it is re-rendered instead
            root = DATASET_ROOTS.get(source["dataset"])
            if root is None:
                report.fail(
                    f"unknown source dataset {source['dataset']!r} for {source['file']}",
                    config=config,
                    row=row["id"],
                    column="provenance",
                )
            elif self.roots.get(root) is None:
                report.fail(
                    f"no root recorded for {source['file']}; pass --root {root}=DIR",
                    config=config,
                    row=row["id"],
                )
        self._check_images(config, row, report)
        if config == "clevr":
            self._check_clevr(config, row, report)

    def _check_images(self, config: str, row: dict[str, Any], report: AuditReport) -> None:
        where = self.dataset_dir / "data" / config
        for index, image in enumerate(row["images"]):
            data, image_path = image["bytes"], image["path"] or ""
            root, _, file = image_path.partition("/")
            recorded = _recorded_sha(row, root, file)
            if recorded is None:
                report.fail(
                    f"image {image_path} has no provenance source",
                    config=config,
                    row=row["id"],
                    column="images",
                )
                continue
            if sha256_bytes(data) != recorded:
                report.fail(
                    f"embedded image {image_path} does not match its recorded sha256",
                    config=config,
                    row=row["id"],
                    column="images",
                    path=where,
                )
                continue
            if root == RENDERED:
                font = self.font.get()
                if font is None:
                    report.fail(self.font.failure or "", config=config, row=row["id"])
                elif _rendered_bytes(row, index, font) != data:
                    report.fail(
                        f"operator image {image_path} re-renders differently",
                        config=config,
                        row=row["id"],
                        column="images",
                        path=where,
                    )
                else:
                    report.checked("rendered", "operator image(s) re-rendered byte-identical")
                continue
            path = self._path(root, file)
            if path is not None and path.is_file():
                if path.read_bytes() != data:
                    report.fail(
                        "embedded image differs from its source file",
                        config=config,
                        row=row["id"],
                        column="images",
                        path=path,
                    )
                else:
                    report.checked("images", "embedded image(s) equal their source file")

    def _scene_objects(self, clevr_root: Path, split: str, index: int) -> list[dict] | None:
        key = (clevr_root, split)
        if key not in self._scenes:
            scenes = read_clevr_scenes(clevr_root, split, check_images=False)
            self._scenes[key] = {s.image_index: list(s.objects) for s in scenes}
        return self._scenes[key].get(index)

    def _check_clevr(self, config: str, row: dict[str, Any], report: AuditReport) -> None:
        scene = next(
            (s for s in row["provenance"]["sources"] if s["id"].startswith("scene:")), None
        )
        root = self.roots.get("clevr")
        if scene is None or root is None or row["scene_index"] is None or row["scene_index"] < 0:
            return  # ingested rows without a known scene cannot be recounted
        path = root / scene["file"]
        objects = self._scene_objects(root, row["source_split"], int(row["scene_index"]))
        attribute = CLEVR_ATTRIBUTES[row["attribute"]]
        if objects is None:
            report.fail(
                f"scene {row['scene_index']} not in the scenes file",
                config=config,
                row=row["id"],
                path=path,
            )
            return
        count = sum(1 for obj in objects if obj.get(attribute) == row["value"])
        if count != row["count"] or str(count) != row["answer"]:
            report.fail(
                f"recount of {attribute}={row['value']} in scene {row['scene_index']} is {count}",
                config=config,
                row=row["id"],
                column="answer" if str(count) != row["answer"] else "count",
                published=row["answer"] if str(count) != row["answer"] else row["count"],
                derived=str(count) if str(count) != row["answer"] else count,
                path=path,
            )
        else:
            report.checked("clevr", "answer(s) recounted from the scenes")

    def check_whole(self, report: AuditReport) -> None:
        """Every episode names a published query and published support rows of its task."""
        if not self._episodes:
            return
        ids = {
            task: {
                split: set(read_columns(self.dataset_dir, task, split, ["id"])["id"].to_pylist())
                for split in SPLITS
            }
            for task in self.tasks
        }
        for sampler, task, query_id, demo_ids, _ in self._episodes:
            task_ids = ids.get(task)
            if task_ids is None:
                continue
            missing = [d for d in demo_ids if d not in task_ids["support"]]
            if query_id not in task_ids["query"] or missing:
                report.fail(
                    f"episode names unpublished rows {(missing or [query_id])[:3]}",
                    config=EPISODES_CONFIG,
                    row=f"{sampler}/{query_id}",
                    path=self.dataset_dir / "data" / EPISODES_CONFIG,
                )
            else:
                report.checked("episodes", "episode(s) name published rows")
