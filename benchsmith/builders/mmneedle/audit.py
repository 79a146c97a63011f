"""MMNeedle's audit hook: re-derive every published row from COCO and the recorded parameters.

The plan is re-run from the captions file with the recorded plan parameters (and, when the
build used a twins report, twin groups found again from the images' pixels, never read from the
report), which re-derives every column of every sample and every stitched image's cells; the
stitched images are re-rendered with the recorded render settings and compared byte for byte
(by sha256). The expected rows are built one by one as dicts
(:func:`~benchsmith.builders.mmneedle.rows.sample_row`,
:func:`~benchsmith.builders.mmneedle.rows.haystack_row`), and every column, provenance
included, is compared: publish builds the same values column by column from the plan's Arrow
columns, so the audit checks them by a second route. A whole-dataset audit re-renders every stitched image once, with the
render's cell cache and worker processes, keeping only the digests; an audit of some ids
re-renders just the images those rows use (a sample's whole haystack).

Source roots: ``captions`` (the captions JSON) and ``images`` (the ``val2014/`` folder), as
recorded at publish time, or overridden with ``audit --root captions=FILE --root images=DIR``.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchsmith.builders.mmneedle.config import PlanConfig, RenderConfig
from benchsmith.builders.mmneedle.features import haystack_config
from benchsmith.builders.mmneedle.rows import RowContext, haystack_row, sample_row
from benchsmith.builders.mmneedle.stitching import encode_jpeg, load_cell, render_stitched_image
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.hashing import params_hash, sha256_bytes
from benchsmith.core.progress import quietly
from benchsmith.core.text_differences import json_values
from benchsmith.family.audit_report import AuditReport, Digest
from benchsmith.family.base import CardRecipe, RowAuditor
from benchsmith.hf.reader import read_rows
from benchsmith.sources.coco.reader import CAPTIONS_RELPATH, IMAGES_DIRNAME

ROOT_NAMES = ("captions", "images")


class MmneedleAuditor(RowAuditor):
    def __init__(self, dataset_dir: Path, info: dict[str, Any], roots: Mapping[str, str]):
        self.dataset_dir = dataset_dir
        self.info = info
        recorded = info.get("roots") or {}
        self.captions_path = Path(roots.get("captions") or recorded.get("captions") or "")
        self.images_dir = Path(roots.get("images") or recorded.get("images") or "")
        self.render = info["params"]["render"]
        self.expected: dict[str, dict[Any, dict[str, Any]]] | None = None  # config -> id -> row
        self.context: RowContext | None = None
        self._digests: dict[str, str] = {}  # stitched_id -> sha256 of its re-rendered JPEG
        self._seen: dict[str, set[Any]] = {}

    _rederived: dict[str, Any] = {}

    def rederived_info(self) -> dict[str, Any]:
        """The plan's counts (skipped captions, stats, QA per config, twins) as the re-run
        plan gives them, and the params hash of the recorded parameters."""
        return self._rederived

    def card_recipe(self) -> CardRecipe:
        from benchsmith.builders.mmneedle.publication import MmneedlePublication, mmneedle_card

        return CardRecipe.of(MmneedlePublication, mmneedle_card)

    def id_column(self, config: str) -> str | None:
        return "stitched_id" if config.startswith("haystacks_") else "sample_id"

    def source_path(self, source: Mapping[str, Any]) -> Path | None:
        relative = source["file"]
        if relative == CAPTIONS_RELPATH.as_posix():
            return self.captions_path
        if relative.startswith(f"{IMAGES_DIRNAME}/"):
            return self.images_dir / relative.split("/", 1)[1]
        return None

    # -- re-derivation ---------------------------------------------------------------------

    def check_dataset(self, report: AuditReport) -> None:
        """Re-plan from the captions file; in a whole audit, re-render every stitched image."""
        recorded = self.info["sources"]["captions"]["sha256"]
        if not self.files.verify(self.captions_path, recorded, report):
            return  # the plan cannot be re-derived from another captions file (reported)
        try:
            self._replan()
        except BenchsmithError as exc:
            report.fail(f"cannot re-run the plan from the recorded parameters: {exc}")
            return
        if self.whole:
            grids = sorted(
                int(c.rsplit("n", 1)[1]) for c in self.configs if c.startswith("haystacks_")
            )
            pools = {
                grid: [
                    (sid, [c["coco_image_id"] for c in row["cells"]])
                    for sid, row in self.expected[haystack_config(grid)].items()
                ]
                for grid in grids
            }
            self._render_digests(pools)

    def _replan(self) -> None:
        from benchsmith.builders.mmneedle.plan import (
            plan_mmneedle,
            pool_rows,
            qa_report,
            sample_frame,
            sample_rows,
            used_image_rows,
        )
        from benchsmith.sources.coco.reader import read_captions

        config = PlanConfig.from_dict(self.info["params"]["plan"])
        source = read_captions(self.captions_path)
        twins = None
        recorded = self.info.get("twins")
        if recorded:  # re-derived from the pixels, never taken from the report
            from benchsmith.builders.mmneedle.twins import coco_twin_groups

            with quietly():
                groups, _ = coco_twin_groups(
                    source, self.images_dir, int(recorded["near_threshold"]), self.workers
                )
            twins = (groups, recorded)
        with quietly():
            plan = plan_mmneedle(source, config, twins=twins)
        expected: dict[str, dict[Any, dict[str, Any]]] = {}
        for grid in plan.pools:
            expected[haystack_config(grid)] = {r["stitched_id"]: r for r in pool_rows(plan, grid)}
        for setting in config.settings():
            expected[setting.name] = {r["sample_id"]: r for r in sample_rows(plan, setting)}
        images = {}
        for image in used_image_rows(plan, source):
            digest = self.files.sha256(self.images_dir / image["file_name"])
            images[image["coco_image_id"]] = {**image, "sha256": digest or ""}
        params = {"plan": self.info["params"]["plan"], "render": self.render}
        self.context = RowContext(params_hash(params), config.seed, source.sha256, images)
        self.expected = expected
        self._rederived = json_values({
            "params_hash": self.context.params_hash,
            "skipped": dict(sorted(source.skipped.items())),
            "stats": dict(sorted(plan.stats.items())),
            "twins": plan.twins,
            "qa": {s.name: qa_report(sample_frame(plan, s)) for s in config.settings()},
        })  # fmt: skip

    def _render_digests(self, pools: dict[int, list[tuple[str, list[int]]]]) -> None:
        from benchsmith.builders.mmneedle.render import stitched_digests

        files = {i: image["file_name"] for i, image in self.context.images.items()}
        cfg = RenderConfig(**self.render, workers=self.workers)
        with tempfile.TemporaryDirectory(prefix="benchsmith-audit-") as scratch:
            self._digests.update(
                stitched_digests(pools, files, self.images_dir, cfg, Path(scratch))
            )

    def _rerender(self, row: dict[str, Any]) -> str:
        """sha256 of one stitched image re-rendered from its re-derived cells."""
        if row["stitched_id"] not in self._digests:
            cells = [
                load_cell(
                    self.images_dir / c["file_name"],
                    self.render["cell_size"],
                    self.render["resample"],
                    self.render["reducing_gap"],
                )[0]
                for c in row["cells"]
            ]
            image = render_stitched_image(cells, row["grid"])
            self._digests[row["stitched_id"]] = sha256_bytes(
                encode_jpeg(image, self.render["jpeg_quality"])
            )
        return self._digests[row["stitched_id"]]

    # -- comparison --------------------------------------------------------------------------

    def audit_row(self, config: str, split: str, row: dict[str, Any], report: AuditReport) -> None:
        if self.expected is None:
            return  # nothing to compare with (reported once by check_dataset)
        id_column = self.id_column(config)
        row_id = row[id_column]
        seen = self._seen.setdefault(config, set())
        if row_id in seen:
            report.fail("appears twice", config=config, row=str(row_id), column=id_column)
            return
        expected_rows = self.expected.get(config, {})
        key = self.match(config, split, row_id, expected_rows, seen)
        if key is None:
            report.fail(
                "no row with this id in the re-derived plan",
                config=config,
                row=str(row_id),
                column=id_column,
            )
            return
        seen.add(key)
        planned = expected_rows[key]
        try:
            if config.startswith("haystacks_"):
                expected = self._expected_haystack(planned)
            else:
                expected = sample_row(self.context, planned)
                if not self.whole:
                    self._check_haystack(config, row, planned, report)
        except BenchsmithError as exc:
            report.fail(f"cannot re-derive: {exc}", config=config, row=str(row_id))
            return
        report.compare_derived_row(config, str(row_id), row, expected)

    def _expected_haystack(self, planned: dict[str, Any]) -> dict[str, Any]:
        digest = self._rerender(planned)
        return haystack_row(
            self.context,
            planned["stitched_id"],
            planned["grid"],
            planned["cells"],
            Digest(digest),
            digest,
        )

    def _check_haystack(
        self, config: str, row: dict[str, Any], planned: dict[str, Any], report: AuditReport
    ) -> None:
        """An audit of a sample also proves the stitched images its haystack shows."""
        grid_config = haystack_config(planned["grid"])
        wanted = [sid for sid in planned["haystack"] if sid not in self._seen.get(grid_config, ())]
        stitched = read_rows(self.dataset_dir, grid_config, "stitched_id", wanted)
        for sid in wanted:
            if sid not in stitched:
                report.fail(
                    f"stitched image {sid} of the haystack is not published",
                    config=config,
                    row=str(row["sample_id"]),
                    column="haystack",
                    path=self.dataset_dir / "data" / grid_config,
                )
                continue
            self._seen.setdefault(grid_config, set()).add(sid)
            expected = self._expected_haystack(self.expected[grid_config][sid])
            report.compare_derived_row(grid_config, sid, stitched[sid], expected)

    def met_unchecked(self, config: str, split: str, row: dict[str, Any]) -> None:
        self._seen.setdefault(config, set()).add(row[self.id_column(config)])

    def check_whole(self, report: AuditReport) -> None:
        """Every re-derived row of the audited configs is published."""
        if self.expected is None:
            return
        for config in self.configs:
            report.unpublished(config, self.expected.get(config, {}),
                               self._seen.get(config, set()), self.id_column(config))  # fmt: skip
