"""VL-ICL's audit hook: rebuild from the recorded sources and parameters, compare every column.

Once per audit, the plan step is re-run into a scratch folder with the recorded config (tasks,
sizes, seeds, words, samplers), the recorded source roots and the recorded font, then the
leakage check with the recorded threshold. The rows publish would write from that rebuild
(:class:`~benchsmith.builders.vlicl.publication.VliclPublication`'s own row builders) are the
expected rows: every published row must equal its expected row in every column, so a changed
answer, operand, class label, count, image or provenance entry is named with its column. This
re-derives everything the build derives: operator results, matching labels, open_mi words,
CLEVR counts from the scenes, TextOCR words from the annotations (their red boxes re-drawn),
embedded images from their files, operator images re-rendered with the recorded font, and the episodes drawn from the support rows.

Roots come from ``build_info.json``; ``audit --root NAME=DIR`` replaces any of them
(``miniimagenet``, ``clevr``, ``textocr``, ``ingest``, and ``font`` for a TTF path) when sources moved.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchsmith.builders.vlicl.build_dir import resolve_roots
from benchsmith.builders.vlicl.features import EPISODES_CONFIG, SAMPLERS, SPLITS
from benchsmith.builders.vlicl.operator_images import load_operator_font
from benchsmith.core.errors import BenchsmithError
from benchsmith.core.progress import quietly
from benchsmith.core.text_differences import json_values
from benchsmith.family.audit_report import AuditReport, Digest
from benchsmith.family.base import CardRecipe, RowAuditor
from benchsmith.hf.layout import splits_written

# provenance ``sources.dataset`` -> the root its ``file`` is relative to
DATASET_ROOTS = {
    "miniimagenet": "miniimagenet",
    "clevr": "clevr",
    "textocr": "textocr",
    "vl-icl": "ingest",
}
ROOT_NAMES = ("miniimagenet", "clevr", "textocr", "ingest", "font")


def _digests(row: dict[str, Any]) -> dict[str, Any]:
    """The row with each embedded image's bytes replaced by their :class:`Digest`."""
    from benchsmith.core.hashing import sha256_bytes

    images = [{**image, "bytes": Digest(sha256_bytes(image["bytes"]))} for image in row["images"]]
    return {**row, "images": images}


class VliclAuditor(RowAuditor):
    def __init__(self, dataset_dir: Path, info: dict[str, Any], roots: Mapping[str, str]):
        self.dataset_dir = dataset_dir
        self.info = info
        override = dict(roots)
        self.font_path = override.pop("font", None)
        self.roots = resolve_roots(info.get("roots", {}), dataset_dir, override)
        self.expected: dict[str, dict[str, dict[str, Any]]] | None = None  # config/split/id
        self.episodes: dict[str, list[dict[str, Any]]] = {}  # sampler -> rows in order
        self._seen: dict[str, set[str]] = {}
        self._episode_index: dict[str, int] = {}

    _rederived: dict[str, Any] = {}

    def rederived_info(self) -> dict[str, Any]:
        return self._rederived

    def card_recipe(self) -> CardRecipe:
        from benchsmith.builders.vlicl.card import vlicl_card
        from benchsmith.builders.vlicl.publication import VliclPublication

        return CardRecipe.of(VliclPublication, lambda info, written: vlicl_card(info))

    def id_column(self, config: str) -> str | None:
        # an episode is named by its query: --id QUERY_ID audits every episode of that query
        return "query_id" if config == EPISODES_CONFIG else "id"

    def source_path(self, source: Mapping[str, Any]) -> Path | None:
        root = DATASET_ROOTS.get(source["dataset"])
        base = None if root is None else self.roots.get(root)
        return None if base is None else base / source["file"]

    # -- re-derivation ---------------------------------------------------------------------

    def _font(self, report: AuditReport) -> Path | None:
        """The recorded font file (None: Pillow's embedded one), checked by its sha256."""
        recorded = self.info.get("font") or {}
        source = str(self.font_path or recorded.get("source") or "")
        path = None if not source or source.startswith("pillow-embedded") else Path(source)
        if recorded:
            _, identity = load_operator_font(path)
            if identity.sha256 != recorded.get("sha256"):
                report.fail(
                    f"operator font differs (sha256 {identity.sha256[:12]} != recorded "
                    f"{str(recorded.get('sha256'))[:12]}): {identity.source}; pass --root font=TTF"
                )
        return path

    def check_dataset(self, report: AuditReport) -> None:
        try:
            self._rebuild(report)
        except BenchsmithError as exc:
            report.fail(f"cannot re-run the build from the recorded sources: {exc}")

    def _rebuild(self, report: AuditReport) -> None:
        from benchsmith.builders.vlicl.config import VliclConfig
        from benchsmith.builders.vlicl.leakage import check_vlicl_leakage
        from benchsmith.builders.vlicl.plan import VliclSources, build_vlicl
        from benchsmith.builders.vlicl.publication import (
            VliclPublication,
            _ids,
            episode_rows,
            rederivable_info,
            task_rows,
        )

        config = VliclConfig.from_dict(self.info["params"])
        sources = VliclSources(
            miniimagenet=self.roots.get("miniimagenet"),
            clevr=self.roots.get("clevr"),
            textocr=self.roots.get("textocr"),
            font=self._font(report),
            ingest=self.roots.get("ingest"),
        )
        threshold = int(self.info["leakage"]["image_threshold"])
        with tempfile.TemporaryDirectory(prefix="benchsmith-audit-") as scratch, quietly():
            plan = Path(scratch) / "plan"
            build_vlicl(config, sources, plan)
            check_vlicl_leakage(plan, threshold, workers=self.workers)
            inputs = VliclPublication(plan).inputs
            written = splits_written(self.info["configs"])
            self._rederived = json_values(rederivable_info(inputs, written))
            fingerprint = (self.info.get("leakage") or {}).get("build_fingerprint")
            self._rederived["leakage"]["build_fingerprint"] = fingerprint  # a hash of paths too
            expected: dict[str, dict[str, dict[str, Any]]] = {}
            for task in inputs.tasks:
                for split in SPLITS:
                    rows = task_rows(inputs, task, split, lambda row: None)
                    expected.setdefault(task, {})[split] = {r["id"]: _digests(r) for r in rows}
            kept = {
                t: _ids(inputs.build.rows(t, "query")) - inputs.removed[t] for t in inputs.tasks
            }
            support = {t: _ids(inputs.build.rows(t, "support")) for t in inputs.tasks}
            for sampler in SAMPLERS:
                self.episodes[sampler] = list(episode_rows(inputs, sampler, kept, support))
        report.checked("rebuild", "build re-run from the recorded sources and parameters")
        self.expected = expected

    # -- comparison --------------------------------------------------------------------------

    def audit_row(self, config: str, split: str, row: dict[str, Any], report: AuditReport) -> None:
        if self.expected is None:
            return  # nothing to compare with (reported once by check_dataset)
        if config == EPISODES_CONFIG and not self.whole:
            self._audit_episode_by_query(split, row, report)
            return
        if config == EPISODES_CONFIG:
            index = self._episode_index.get(split, 0)
            self._episode_index[split] = index + 1
            expected_rows = self.episodes.get(split, [])
            row_id = f"{split}/{index}"
            if index >= len(expected_rows):
                report.fail("extra episode", config=config, row=row_id, column="query_id")
                return
            self._compare(config, row_id, row, expected_rows[index], report)
            return
        seen = self._seen.setdefault(f"{config}/{split}", set())
        if row["id"] in seen:
            report.fail("appears twice", config=config, row=row["id"], column="id")
            return
        expected_rows = self.expected.get(config, {}).get(split, {})
        key = self.match(config, split, row["id"], expected_rows, seen)
        if key is None:
            report.fail(
                "no row with this id in the rebuild", config=config, row=row["id"], column="id"
            )
            return
        seen.add(key)
        self._compare(config, row["id"], row, expected_rows[key], report)

    def _audit_episode_by_query(self, split: str, row: dict[str, Any], report: AuditReport) -> None:
        """An episode picked by ``--id QUERY_ID`` (episodes have no id of their own): the k-th
        published episode of a query is compared with the k-th rebuilt episode of that query,
        so a changed shot count or seed is named as such."""
        query = str(row["query_id"])
        k = self._episode_index.get(f"{split}/{query}", 0)
        self._episode_index[f"{split}/{query}"] = k + 1
        row_id = f"{split}/{query}#{k}"
        rebuilt = [e for e in self.episodes.get(split, []) if str(e["query_id"]) == query]
        if k >= len(rebuilt):
            report.fail("extra episode of this query", config=EPISODES_CONFIG, row=row_id)
            return
        self._compare(EPISODES_CONFIG, row_id, row, rebuilt[k], report)

    @staticmethod
    def _compare(
        config: str, row_id: str, row: dict[str, Any], expected: dict[str, Any], report: AuditReport
    ) -> None:
        report.compare_derived_row(config, row_id, row, expected)

    def met_unchecked(self, config: str, split: str, row: dict[str, Any]) -> None:
        if config != EPISODES_CONFIG:
            self._seen.setdefault(f"{config}/{split}", set()).add(row["id"])

    def check_whole(self, report: AuditReport) -> None:
        """Every rebuilt row and episode of the audited configs is published."""
        if self.expected is None:
            return
        for config in self.configs:
            if config == EPISODES_CONFIG:
                for sampler, rows in self.episodes.items():
                    published = self._episode_index.get(sampler, 0)
                    if published < len(rows):
                        report.fail(
                            f"{len(rows) - published} rebuilt episode(s) are not published",
                            config=config,
                            row=f"{sampler}/{published}",
                            column="query_id",
                        )
                continue
            for split, rows in self.expected.get(config, {}).items():
                report.unpublished(config, rows, self._seen.get(f"{config}/{split}", set()), "id")
