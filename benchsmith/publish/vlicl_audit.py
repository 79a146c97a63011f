"""Audit a published VL-ICL dataset: prove every row against its sources.

For each row of each task config (or of the configs / ids asked for) it checks that:

* every source file in ``provenance.sources`` exists under its root with the recorded sha256;
* every embedded image has exactly the bytes of its source file (the image's ``path`` is
  ``<root>/<file>``), and the sha256 the provenance records for it;
* rendered operator images re-render byte-identically from ``a``/``b`` with the recorded font
  (whose sha256 must match, so a different Pillow or font is caught, not silently accepted);
* CLEVR answers recount from the scenes JSON (``count(obj[attribute] == value)``);
* (whole-dataset audits) every episode names published query and support ids.

Roots come from ``build_info.json`` (absolute paths recorded at publish); ``roots_override``
replaces any of them (``miniimagenet``, ``clevr``, ``ingest``, and ``font`` for a TTF path)
when the sources moved. The first difference per item is a failure naming the file; the CLI
exits 0 when nothing failed, 1 otherwise, 2 on bad arguments (as ``audit`` for MMNeedle).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from benchsmith.core.errors import AuditError, BenchsmithError
from benchsmith.core.hashing import sha256_bytes, sha256_file
from benchsmith.publish.audit import AuditReport
from benchsmith.publish.vlicl_features import CLEVR_ATTRIBUTES, EPISODES_CONFIG, SAMPLERS, SPLITS
from benchsmith.sources.clevr import read_clevr_scenes
from benchsmith.sources.operator_images import (
    load_operator_font,
    render_expression,
    render_operand,
)
from benchsmith.sources.published import config_files, read_build_info

# provenance ``sources.dataset`` -> the root its ``file`` is relative to
DATASET_ROOTS = {"miniimagenet": "miniimagenet", "clevr": "clevr", "vl-icl": "ingest"}
RENDERED = "rendered"
BATCH_ROWS = 32


@dataclass
class VliclAuditReport(AuditReport):
    rows_checked: int = 0
    images_compared: int = 0
    clevr_recounted: int = 0
    episodes_checked: int = 0

    def summary_lines(self) -> list[str]:
        lines = [
            f"  rows      {self.rows_checked} row(s) checked",
            f"  sources   {len(self.sources_verified)} file(s) match their recorded sha256",
            f"  images    {self.images_compared} embedded image(s) equal their source",
        ]
        if self.rerendered:
            lines.append(
                f"  rendered  {len(self.rerendered)} operator image(s) re-rendered byte-identical"
            )
        if self.clevr_recounted:
            lines.append(f"  clevr     {self.clevr_recounted} answer(s) recounted from the scenes")
        if self.episodes_checked:
            lines.append(f"  episodes  {self.episodes_checked} episode(s) name published rows")
        return lines


@dataclass
class Sources:
    """Roots, the font and caches (file hashes, CLEVR scenes) shared by every row."""

    roots: dict[str, Path | None]
    font_info: dict[str, Any] | None
    font_path: str | None
    _hashes: dict[Path, str] = field(default_factory=dict)
    _scenes: dict[tuple[Path, str], dict[int, Any]] = field(default_factory=dict)
    _font: Any = None
    font_failure: str | None = None

    def path(self, root: str, file: str) -> Path | None:
        base = self.roots.get(root)
        return None if base is None else base / file

    def verify(self, path: Path | None, sha: str, what: str, report: AuditReport) -> bool:
        if path is None:
            report.failures.append(f"no root recorded for {what}; pass it as an override")
            return False
        if not path.is_file():
            report.failures.append(f"source file missing: {path}")
            return False
        if path not in self._hashes:
            self._hashes[path] = sha256_file(path)
        if self._hashes[path] != sha:
            report.failures.append(
                f"source file differs (sha256 {self._hashes[path][:12]} != recorded {sha[:12]}): {path}"
            )
            return False
        report.sources_verified.add(str(path))
        return True

    def font(self) -> Any:
        """The recorded font, loaded once; None (with ``font_failure`` set) if it differs."""
        if self._font is None and self.font_failure is None:
            info = self.font_info or {}
            source = self.font_path or info.get("source") or ""
            try:
                path = None if source.startswith("pillow-embedded") else source
                self._font, identity = load_operator_font(path)
            except BenchsmithError as exc:
                self.font_failure = f"operator font cannot be loaded: {exc}"
                return None
            if identity.sha256 != info.get("sha256"):
                self.font_failure = (
                    f"operator font differs (sha256 {identity.sha256[:12]} != recorded "
                    f"{str(info.get('sha256'))[:12]}): {identity.source}"
                )
                self._font = None
        return self._font

    def scene_objects(self, clevr_root: Path, split: str, index: int) -> list[dict] | None:
        key = (clevr_root, split)
        if key not in self._scenes:
            scenes = read_clevr_scenes(clevr_root, split, check_images=False)
            self._scenes[key] = {s.image_index: list(s.objects) for s in scenes}
        return self._scenes[key].get(index)


def _check_sources(row: dict[str, Any], sources: Sources, report: AuditReport) -> None:
    for source in row["provenance"]["sources"]:
        if source["dataset"] == RENDERED:
            continue  # a rendered image has no file to read: it is re-rendered instead
        root = DATASET_ROOTS.get(source["dataset"])
        if root is None:
            report.failures.append(
                f"{row['id']}: unknown source dataset {source['dataset']!r} for {source['file']}"
            )
            continue
        sources.verify(sources.path(root, source["file"]), source["sha256"], source["file"], report)


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


def _check_images(row: dict[str, Any], sources: Sources, report: AuditReport, where: Path) -> None:
    for index, image in enumerate(row["images"]):
        data, image_path = image["bytes"], image["path"] or ""
        root, _, file = image_path.partition("/")
        recorded = _recorded_sha(row, root, file)
        if recorded is None:
            report.failures.append(f"{row['id']}: image {image_path} has no provenance source")
            continue
        if sha256_bytes(data) != recorded:
            report.failures.append(
                f"{row['id']}: embedded image {image_path} does not match its recorded sha256: {where}"
            )
            continue
        if root == RENDERED:
            font = sources.font()
            if font is None:
                report.failures.append(f"{row['id']}: {sources.font_failure}")
                continue
            if _rendered_bytes(row, index, font) != data:
                report.failures.append(
                    f"{row['id']}: operator image {image_path} re-renders differently: {where}"
                )
            else:
                report.rerendered.append(row["id"])
            continue
        path = sources.path(root, file)
        if path is not None and path.is_file() and path.read_bytes() != data:
            report.failures.append(
                f"{row['id']}: embedded image differs from its source file: {path}"
            )
        elif path is not None and path.is_file():
            report.images_compared += 1


def _check_clevr(row: dict[str, Any], sources: Sources, report: VliclAuditReport) -> None:
    scene = next((s for s in row["provenance"]["sources"] if s["id"].startswith("scene:")), None)
    root = sources.roots.get("clevr")
    if scene is None or root is None or row["scene_index"] is None or row["scene_index"] < 0:
        return  # ingested rows without a known scene cannot be recounted
    path = root / scene["file"]
    if str(path) not in report.sources_verified:
        return  # the scenes file itself failed its check (already reported)
    objects = sources.scene_objects(root, row["source_split"], int(row["scene_index"]))
    attribute = CLEVR_ATTRIBUTES[row["attribute"]]
    if objects is None:
        report.failures.append(f"{row['id']}: scene {row['scene_index']} not in {path}")
        return
    count = sum(1 for obj in objects if obj.get(attribute) == row["value"])
    if count != row["count"] or str(count) != row["answer"]:
        report.failures.append(
            f"{row['id']}: recount of {attribute}={row['value']} in scene {row['scene_index']} "
            f"is {count}, published answer {row['answer']}: {path}"
        )
    else:
        report.clevr_recounted += 1


def _rows(dataset_dir: Path, config: str, split: str) -> Iterator[tuple[dict[str, Any], Path]]:
    for file in config_files(dataset_dir, config, split):
        parquet = pq.ParquetFile(file, pre_buffer=False)
        for batch in parquet.iter_batches(batch_size=BATCH_ROWS):
            for row in batch.to_pylist():
                yield row, file


def _check_episodes(
    dataset_dir: Path, ids: dict[str, dict[str, set[str]]], report: VliclAuditReport
) -> None:
    for sampler in SAMPLERS:
        for episode, file in _rows(dataset_dir, EPISODES_CONFIG, sampler):
            task_ids = ids.get(episode["task"])
            if task_ids is None:
                continue
            missing = [d for d in episode["demo_ids"] if d not in task_ids["support"]]
            if episode["query_id"] not in task_ids["query"] or missing:
                report.failures.append(
                    f"episode {sampler}/{episode['query_id']} names unpublished rows "
                    f"{(missing or [episode['query_id']])[:3]}: {file}"
                )
            else:
                report.episodes_checked += 1


def audit_vlicl(
    dataset_dir: str | Path,
    roots_override: Mapping[str, Any] | None = None,
    *,
    configs: list[str] | None = None,
    ids: list[str] | None = None,
) -> VliclAuditReport:
    """Audit the whole dataset, or only ``configs`` / row ``ids`` (``<task>/<split>/<n>``)."""
    dataset_dir = Path(dataset_dir)
    info = read_build_info(dataset_dir)
    if info.get("family") != "vlicl":
        raise AuditError(f"dataset family {info.get('family')!r} is not VL-ICL", path=dataset_dir)
    override = dict(roots_override or {})
    font_path = override.pop("font", None)
    roots = {k: Path(v) if v else None for k, v in {**info.get("roots", {}), **override}.items()}
    sources = Sources(roots, info.get("font"), str(font_path) if font_path else None)
    tasks = list(info.get("counts", {}))
    wanted = set(ids or [])
    chosen = [t for t in tasks if t in (configs or tasks)]
    chosen = [t for t in chosen if not wanted or any(i.startswith(f"{t}/") for i in wanted)]
    unknown = [c for c in (configs or []) if c not in tasks]
    if unknown:
        raise AuditError(f"config(s) {unknown} not in this dataset; available: {', '.join(tasks)}")
    report = VliclAuditReport(", ".join(ids) if ids else ", ".join(configs or ["all configs"]))
    seen: dict[str, dict[str, set[str]]] = {}
    for task in chosen:
        for split in SPLITS:
            if wanted and not any(i.startswith(f"{task}/{split}/") for i in wanted):
                continue
            for row, file in _rows(dataset_dir, task, split):
                seen.setdefault(task, {s: set() for s in SPLITS})[split].add(row["id"])
                if wanted and row["id"] not in wanted:
                    continue
                report.rows_checked += 1
                report.decisions += list(row["provenance"]["decisions"]) if wanted else []
                _check_sources(row, sources, report)
                _check_images(row, sources, report, file)
                if task == "clevr":
                    _check_clevr(row, sources, report)
    missing = sorted(wanted - {i for t in seen.values() for s in t.values() for i in s})
    if missing:
        raise AuditError(f"row id(s) not in the dataset: {missing[:5]}", path=dataset_dir)
    if not configs and not ids:
        _check_episodes(dataset_dir, seen, report)
    return report
