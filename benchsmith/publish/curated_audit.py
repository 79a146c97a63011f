"""Audit one sample of a curated dataset: its decisions, and that it is its source row unchanged.

For a kept sample: the row's provenance decisions equal its rows in ``decisions.parquet``, and
the source row (re-read from the source dataset) still has the digest recorded in provenance.
For a dropped sample: the stage and reason that removed it. Either way the decision log must be
the one the build wrote (sha256 in ``build_info.json``) and the source parquet files unchanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from benchsmith.core.errors import AuditError
from benchsmith.core.hashing import sha256_file
from benchsmith.publish.audit import AuditReport
from benchsmith.publish.curated import DECISIONS_FILE
from benchsmith.sources.hf_dataset import ColumnMap, ImageJoin, row_digest, split_files
from benchsmith.sources.published import read_build_info


def _rows_with_id(files: list[Path], id_column: str, row_id: str) -> list[dict[str, Any]]:
    dataset = pads.dataset([str(p) for p in files], format="parquet")
    table = dataset.to_table(filter=pads.field(id_column).cast(pa.string()) == row_id)
    return table.to_pylist()


def _source_columns(info: dict[str, Any]) -> ColumnMap:
    columns = dict(info["source"]["columns"])
    join = columns.pop("image_join", None)
    return ColumnMap(**columns, image_join=ImageJoin(**join) if join else None)


def _check_source_files(source_dir: Path, info: dict[str, Any], report: AuditReport) -> None:
    for relative, digest in info["source"]["files"].items():
        path = source_dir / relative
        if not path.is_file():
            report.failures.append(f"source file missing: {path}")
        elif sha256_file(path) != digest:
            report.failures.append(f"source file differs from the one curated: {path}")
        else:
            report.sources_verified.add(relative)


def audit_curated(
    dataset_dir: str | Path, config: str, row_id: str, source_dir: Path | None = None
) -> AuditReport:
    dataset_dir = Path(dataset_dir)
    info = read_build_info(dataset_dir)
    if info.get("family") != "curated":
        raise AuditError("not a curated dataset", path=dataset_dir)
    if config != info["source"]["config"]:
        raise AuditError(
            f"this curated dataset has config {info['source']['config']!r}, not {config!r}",
            path=dataset_dir,
        )
    report = AuditReport(f"{config}/{row_id} (curated)")
    decisions_path = dataset_dir / DECISIONS_FILE
    if not decisions_path.is_file() or sha256_file(decisions_path) != info["decisions_sha256"]:
        report.failures.append(f"decision log missing or changed since the build: {decisions_path}")
        return report
    table = pq.read_table(decisions_path)
    logged = [r for r in table.to_pylist() if r["sample_id"] == row_id]
    if not logged:
        raise AuditError(
            f"sample {row_id!r} is not in the curated source split", path=decisions_path
        )
    report.decisions = [
        {k: r[k] or "" for k in ("stage", "action", "reason", "evidence")} for r in logged
    ]
    source_dir = Path(source_dir or info["source"]["dataset_dir"])
    _check_source_files(source_dir, info, report)
    columns = _source_columns(info)
    split = info["source"]["split"]
    kept_rows = _rows_with_id(split_files(dataset_dir, config, split), columns.id, row_id)
    dropped = any(r["action"] == "drop" for r in logged)
    if dropped:
        if kept_rows:
            report.failures.append(f"sample {row_id} was dropped but is in the published rows")
        return report
    if len(kept_rows) != 1:
        report.failures.append(f"kept sample {row_id} is missing from the published rows")
        return report
    provenance = kept_rows[0]["provenance"]
    curated_steps = [d for d in provenance["decisions"] if d["stage"].startswith("curate/")]
    expected = [f"curate/{r['stage']}:{r['action']}:{r['reason'] or ''}" for r in logged]
    found = [f"{d['stage']}:{d['action']}:{d['reason']}" for d in curated_steps]
    if expected != found:
        report.failures.append(
            f"row provenance decisions {found} differ from {DECISIONS_FILE} {expected}"
        )
    source_rows = _rows_with_id(split_files(source_dir, config, split), columns.id, row_id)
    if len(source_rows) != 1:
        report.failures.append(f"source row {row_id} not found once in {source_dir}")
        return report
    recorded = provenance["sources"][-1]["sha256"]
    actual = row_digest(source_rows[0])
    if actual != recorded:
        report.failures.append(
            f"source row {row_id} changed (digest {actual[:12]} != recorded {recorded[:12]}) in {source_dir}"
        )
    else:
        report.sources_verified.add(f"{config}/{split}#{row_id}")
    return report
