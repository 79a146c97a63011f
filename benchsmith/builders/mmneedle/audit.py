"""MMNeedle's audit hook: re-derive a published row from COCO and the recorded settings.

The one audit (:mod:`benchsmith.publish.audit`) has already checked the row's own source
files against their sha256. Here:

- a stitched image (``haystacks_n{N}``) is re-rendered from its cells' source files with the
  recorded render settings and compared byte for byte with the published JPEG and its
  ``sha256`` column;
- a sample (``m{M}_n{N}_k{K}``): its captions must be in the captions file under the recorded
  annotation ids, and every stitched image of its haystack must exist and re-render
  byte-identically (each stitched image is re-rendered once per audit).

Source roots: ``captions`` (the captions JSON) and ``images`` (the ``val2014/`` folder), as
recorded at publish time, or overridden with ``audit --root captions=FILE --root images=DIR``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchsmith.builders.base import AuditReport, RowAuditor
from benchsmith.builders.mmneedle.features import haystack_config
from benchsmith.builders.mmneedle.stitching import encode_jpeg, load_cell, render_stitched_image
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import sha256_bytes
from benchsmith.hf.reader import read_rows
from benchsmith.sources.coco.reader import CAPTIONS_RELPATH, IMAGES_DIRNAME, clean_caption

ROOT_NAMES = ("captions", "images")


class MmneedleAuditor(RowAuditor):
    def __init__(self, dataset_dir: Path, info: dict[str, Any], roots: Mapping[str, str]):
        self.dataset_dir = dataset_dir
        recorded = info.get("roots") or {}
        self.captions_path = Path(roots.get("captions") or recorded.get("captions") or "")
        self.images_dir = Path(roots.get("images") or recorded.get("images") or "")
        self.render = info["params"]["render"]
        self.legacy = info["params"]["plan"]["order"] == "legacy"
        self._captions: dict[int, str] | None = None
        self._stitched: dict[str, bool] = {}  # stitched_id -> re-rendered identically

    def id_column(self, config: str) -> str | None:
        return "stitched_id" if config.startswith("haystacks_") else "sample_id"

    def source_path(self, source: Mapping[str, Any]) -> Path | None:
        relative = source["file"]
        if relative == CAPTIONS_RELPATH.as_posix():
            return self.captions_path
        if relative.startswith(f"{IMAGES_DIRNAME}/"):
            return self.images_dir / relative.split("/", 1)[1]
        return None

    def audit_row(self, config: str, split: str, row: dict[str, Any], report: AuditReport) -> None:
        for source in row["provenance"]["sources"]:
            if self.source_path(source) is None:
                report.fail(
                    f"unknown source file {source['file']!r} in provenance",
                    config=config,
                    row=self._id(config, row),
                    column="provenance",
                )
        if config.startswith("haystacks_"):
            self._check_stitched(config, row, report)
            return
        self._check_captions(config, row, report)
        grid_config = haystack_config(row["grid"])
        known = {sid for sid in row["haystack"] if sid in self._stitched}
        fetch = [sid for sid in row["haystack"] if sid not in known]
        stitched = read_rows(self.dataset_dir, grid_config, "stitched_id", fetch) if fetch else {}
        for sid in row["haystack"]:
            if sid in self._stitched:
                continue
            if sid not in stitched:
                report.fail(
                    f"stitched image {sid} of the haystack is missing",
                    config=config,
                    row=str(row["sample_id"]),
                    column="haystack",
                    path=self.dataset_dir / "data" / grid_config,
                )
                continue
            ok = all(
                self.files.verify(self.source_path(s), s["sha256"], report)
                for s in stitched[sid]["provenance"]["sources"]
                if self.source_path(s) is not None
            )
            if ok:
                self._check_stitched(grid_config, stitched[sid], report)

    def _id(self, config: str, row: dict[str, Any]) -> str:
        return str(row[self.id_column(config)])

    def _check_stitched(self, config: str, row: dict[str, Any], report: AuditReport) -> None:
        sid = row["stitched_id"]
        if sid in self._stitched:
            return
        render = self.render
        try:
            cells = [
                load_cell(
                    self.images_dir / c["file_name"],
                    render["cell_size"],
                    render["resample"],
                    render["reducing_gap"],
                )[0]
                for c in row["cells"]
            ]
        except BenchsmithError as exc:
            report.fail(f"cannot re-render: {exc}", config=config, row=sid, column="image")
            self._stitched[sid] = False
            return
        data = encode_jpeg(render_stitched_image(cells, row["grid"]), render["jpeg_quality"])
        published = row["image"]["bytes"]
        where = self.dataset_dir / "data" / config
        if data != published:
            report.fail(
                f"stitched image re-renders differently (sha256 {sha256_bytes(data)[:12]} != "
                f"published {sha256_bytes(published)[:12]})",
                config=config,
                row=sid,
                column="image",
                path=where,
            )
        elif sha256_bytes(published) != row["sha256"]:
            report.fail(
                "image bytes do not match the sha256 column",
                config=config,
                row=sid,
                column="sha256",
                published=row["sha256"],
                derived=sha256_bytes(published),
                path=where,
            )
        else:
            report.checked("images", "stitched image(s) re-rendered byte-identical")
        self._stitched[sid] = data == published

    def _caption_texts(self) -> dict[int, str]:
        if self._captions is None:
            raw = json.loads(self.captions_path.read_bytes())
            self._captions = {
                a["id"]: a["caption"] for a in raw.get("annotations", []) if "id" in a
            }
        return self._captions

    def _check_captions(self, config: str, row: dict[str, Any], report: AuditReport) -> None:
        if not self.captions_path.is_file():
            return  # already reported as a missing source file
        texts = self._caption_texts()
        for needle in row["needles"]:
            text = texts.get(needle["caption_id"])
            expected = None if text is None else (text if self.legacy else clean_caption(text))
            if expected != needle["caption"]:
                report.fail(
                    f"caption annotation {needle['caption_id']} does not say {needle['caption']!r}",
                    config=config,
                    row=str(row["sample_id"]),
                    column="needles",
                    path=self.captions_path,
                )
            else:
                report.checked("captions", "found under their recorded annotation ids")
