"""``benchsmith audit``: prove where a published row came from.

For a row it checks that every recorded source file exists with the recorded sha256, that the
captions it quotes are in the captions file under the recorded annotation id, and re-renders
every stitched image it uses from the recorded sources with the recorded settings, comparing
bytes with the published image. The first difference names the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchsmith.core.errors import AuditError
from benchsmith.core.hashing import sha256_bytes, sha256_file
from benchsmith.publish.mmneedle_features import haystack_config
from benchsmith.sources.coco import CAPTIONS_RELPATH, IMAGES_DIRNAME, clean_caption
from benchsmith.sources.published import read_build_info, read_rows
from benchsmith.stages.stitching import encode_jpeg, load_cell, render_stitched_image


@dataclass
class AuditReport:
    subject: str
    failures: list[str] = field(default_factory=list)
    decisions: list[dict[str, str]] = field(default_factory=list)
    sources_verified: set[str] = field(default_factory=set)
    captions_verified: int = 0
    rerendered: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def render(self) -> str:
        """Verdict line, what was checked (:meth:`summary_lines`), then failures and decisions."""
        lines = [f"audit {self.subject}: {'OK' if self.ok else 'FAILED'}", *self.summary_lines()]
        lines += [f"  FAIL      {f}" for f in self.failures]
        lines += [
            f"  decision  {d['stage']}: {d['action']} {d['reason']} {d['evidence']}"
            for d in self.decisions
        ]
        return "\n".join(lines)

    def summary_lines(self) -> list[str]:
        """What was checked, one line per kind of check; families override this."""
        lines = [f"  sources   {len(self.sources_verified)} file(s) match their recorded sha256"]
        if self.captions_verified:
            lines.append(
                f"  captions  {self.captions_verified} found under their recorded annotation ids"
            )
        if self.rerendered:
            lines.append(
                f"  images    {len(self.rerendered)} stitched image(s) re-rendered byte-identical: {', '.join(self.rerendered)}"
            )
        return lines


@dataclass
class SourceResolver:
    """Maps provenance file names (COCO layout) to files on this machine and caches hashes."""

    captions_path: Path
    images_dir: Path
    _hashes: dict[Path, str] = field(default_factory=dict)

    def path(self, relative: str) -> Path:
        if relative == CAPTIONS_RELPATH.as_posix():
            return self.captions_path
        if relative.startswith(f"{IMAGES_DIRNAME}/"):
            return self.images_dir / relative.split("/", 1)[1]
        raise AuditError(f"unknown source file in provenance: {relative}")

    def verify(self, source: dict[str, Any], report: AuditReport) -> bool:
        path = self.path(source["file"])
        if not path.is_file():
            report.failures.append(f"source file missing: {path}")
            return False
        if path not in self._hashes:
            self._hashes[path] = sha256_file(path)
        if self._hashes[path] != source["sha256"]:
            report.failures.append(
                f"source file differs (sha256 {self._hashes[path][:12]} != recorded {str(source['sha256'])[:12]}): {path}"
            )
            return False
        report.sources_verified.add(source["file"])
        return True


def _check_sources(row: dict[str, Any], resolver: SourceResolver, report: AuditReport) -> None:
    for source in row["provenance"]["sources"]:
        resolver.verify(source, report)


def _check_captions(
    sample: dict[str, Any], resolver: SourceResolver, legacy: bool, report: AuditReport
) -> None:
    wanted = {n["caption_id"]: n["caption"] for n in sample["needles"]}
    raw = json.loads(resolver.captions_path.read_bytes())
    found = {a["id"]: a["caption"] for a in raw.get("annotations", []) if a.get("id") in wanted}
    for caption_id, caption in wanted.items():
        text = found.get(caption_id)
        expected = None if text is None else (text if legacy else clean_caption(text))
        if expected != caption:
            report.failures.append(
                f"caption annotation {caption_id} does not say {caption!r}: {resolver.captions_path}"
            )
        else:
            report.captions_verified += 1


def _rerender(
    stitched: dict[str, Any],
    resolver: SourceResolver,
    render: dict[str, Any],
    dataset_dir: Path,
    report: AuditReport,
) -> None:
    cells = [
        load_cell(
            resolver.path(f"{IMAGES_DIRNAME}/{c['file_name']}"),
            render["cell_size"],
            render["resample"],
            render["reducing_gap"],
        )[0]
        for c in stitched["cells"]
    ]
    data = encode_jpeg(render_stitched_image(cells, stitched["grid"]), render["jpeg_quality"])
    published = stitched["image"]["bytes"]
    where = dataset_dir / "data" / haystack_config(stitched["grid"])
    if data != published:
        report.failures.append(
            f"stitched image {stitched['stitched_id']} re-renders differently (sha256 {sha256_bytes(data)[:12]} != published {sha256_bytes(published)[:12]}): {where}"
        )
    elif sha256_bytes(published) != stitched["sha256"]:
        report.failures.append(
            f"stitched image {stitched['stitched_id']} bytes do not match its sha256 column: {where}"
        )
    else:
        report.rerendered.append(stitched["stitched_id"])


def audit_mmneedle(
    dataset_dir: str | Path,
    config: str,
    row_id: str,
    captions: Path | None = None,
    images_dir: Path | None = None,
) -> AuditReport:
    dataset_dir = Path(dataset_dir)
    info = read_build_info(dataset_dir)
    if info.get("family") != "mmneedle":
        raise AuditError(
            f"dataset family {info.get('family')!r} is not supported by this audit",
            path=dataset_dir,
        )
    resolver = SourceResolver(
        Path(captions or info["sources"]["captions"]["path"]),
        Path(images_dir or info["sources"]["images_dir"]),
    )
    render = info["params"]["render"]
    if config.startswith("haystacks_"):
        rows = read_rows(dataset_dir, config, "stitched_id", [row_id])
        if row_id not in rows:
            raise AuditError(
                f"stitched image {row_id!r} not in config {config}",
                path=dataset_dir / "data" / config,
            )
        report = AuditReport(f"{config}/{row_id}")
        _check_sources(rows[row_id], resolver, report)
        if report.ok:
            _rerender(rows[row_id], resolver, render, dataset_dir, report)
        return report
    try:
        sample_id = int(row_id)
    except ValueError as exc:
        raise AuditError(f"sample ids of {config} are integers, got {row_id!r}") from exc
    rows = read_rows(dataset_dir, config, "sample_id", [sample_id])
    if sample_id not in rows:
        raise AuditError(
            f"sample {sample_id} not in config {config}", path=dataset_dir / "data" / config
        )
    sample = rows[sample_id]
    report = AuditReport(f"{config}/{sample_id}", decisions=list(sample["provenance"]["decisions"]))
    _check_sources(sample, resolver, report)
    if resolver.captions_path.is_file():
        _check_captions(sample, resolver, info["params"]["plan"]["order"] == "legacy", report)
    stitched = read_rows(
        dataset_dir, haystack_config(sample["grid"]), "stitched_id", sample["haystack"]
    )
    for sid in sample["haystack"]:
        if sid not in stitched:
            report.failures.append(
                f"stitched image {sid} is missing from {dataset_dir / 'data' / haystack_config(sample['grid'])}"
            )
            continue
        before = len(report.failures)
        _check_sources(stitched[sid], resolver, report)
        if len(report.failures) == before:
            _rerender(stitched[sid], resolver, render, dataset_dir, report)
    return report
