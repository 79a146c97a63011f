"""The one audit: prove where every published row came from, for any family.

``audit_dataset`` reads ``build_info.json`` and asks the family for its
:class:`~benchsmith.builders.base.RowAuditor`. Then, for every row it selects (one config,
some ids, or everything):

1. every source file the row's provenance names is checked against its recorded sha256,
   each file hashed once per audit however many rows name it;
2. the family re-derives the row from those sources and its recorded parameters
   (``audit_row``) and reports every difference, naming the config, the row and the column.

A whole-dataset audit then runs the family's cross-row checks (``check_whole``). The report
says what was checked and lists every failure; the CLI exits 1 when there is one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads

from benchsmith.builders.base import AuditReport, DatasetKind, RowAuditor
from benchsmith.core.errors import AuditError
from benchsmith.core.hashing import sha256_file
from benchsmith.core.progress import progress_bar
from benchsmith.hf.reader import iter_row_batches, read_build_info, split_files

BATCH_ROWS = 32


class SourceFiles:
    """Hashes each source file once per audit and reports a missing or changed file once."""

    def __init__(self) -> None:
        self._hashes: dict[Path, str | None] = {}
        self._reported: set[tuple[Path, str]] = set()

    def verify(self, path: Path, sha256: str, report: AuditReport) -> bool:
        if path not in self._hashes:
            self._hashes[path] = sha256_file(path) if path.is_file() else None
        actual = self._hashes[path]
        if actual == sha256:
            report.sources_verified.add(str(path))
            return True
        if (path, sha256) not in self._reported:
            self._reported.add((path, sha256))
            if actual is None:
                report.fail("source file missing", path=path)
            else:
                report.fail(
                    f"source file differs (sha256 {actual[:12]} != recorded {str(sha256)[:12]})",
                    path=path,
                )
        return False


def _config_splits(info: dict[str, Any], dataset_dir: Path) -> dict[str, list[str]]:
    configs = info.get("configs")
    if not isinstance(configs, dict) or not configs:
        raise AuditError(
            "build_info.json lists no configs",
            path=dataset_dir / "build_info.json",
            fix="publish the dataset again",
        )
    return {name: sorted(splits) for name, splits in configs.items()}


def _selected_rows(
    dataset_dir: Path, config: str, split: str, id_column: str | None, ids: set[str] | None
) -> Iterable[tuple[Path, list[dict[str, Any]]]]:
    """Every row of a split, or (with ids) only the rows whose id column matches, read with a
    filter so a lookup never loads a whole image config."""
    if ids is None:
        yield from iter_row_batches(dataset_dir, config, split, batch_size=BATCH_ROWS)
        return
    if id_column is None:
        return
    for file in split_files(dataset_dir, config, split):
        dataset = pads.dataset([str(file)], format="parquet")
        if id_column not in dataset.schema.names:
            continue
        wanted = pads.field(id_column).cast(pa.string()).isin(sorted(ids))
        rows = dataset.to_table(filter=wanted).to_pylist()
        if rows:
            yield file, rows


def audit_dataset(
    dataset_dir: str | Path,
    kind: DatasetKind,
    *,
    configs: list[str] | None = None,
    ids: list[str] | None = None,
    roots: Mapping[str, str] | None = None,
) -> AuditReport:
    """Audit every row of ``dataset_dir`` (or of ``configs``, or the rows with ``ids``)."""
    dataset_dir = Path(dataset_dir)
    info = read_build_info(dataset_dir)
    if info.get("family") != kind.name:
        raise AuditError(
            f"dataset family {info.get('family')!r} is not {kind.name!r}",
            path=dataset_dir / "build_info.json",
            fix="audit it with `benchsmith audit DIR`, which reads the family from build_info",
        )
    available = _config_splits(info, dataset_dir)
    unknown = [c for c in configs or [] if c not in available]
    if unknown:
        raise AuditError(
            f"config(s) {unknown} not in this dataset; available: {', '.join(sorted(available))}",
            path=dataset_dir,
        )
    auditor: RowAuditor = kind.auditor(dataset_dir, info, dict(roots or {}))
    chosen = [c for c in available if (not configs or c in configs) and auditor.audits_rows(c)]
    wanted = {str(i) for i in ids} if ids else None
    prefix = f"{configs[0]}/" if configs and len(configs) == 1 else ""
    subject = ", ".join(i if i.startswith(prefix) else prefix + i for i in ids or []) or ", ".join(
        configs or ["all configs"]
    )
    report = AuditReport(subject)
    sources = SourceFiles()
    auditor.files = sources
    auditor.check_dataset(report)
    found: set[str] = set()
    total = (
        None
        if wanted
        else sum(info["configs"][c][s]["num_examples"] for c in chosen for s in available[c])
    )
    bar = progress_bar(total=total, desc=f"audit {dataset_dir.name}", unit="row")
    for config in chosen:
        id_column = auditor.id_column(config)
        for split in available[config]:
            for _, rows in _selected_rows(dataset_dir, config, split, id_column, wanted):
                for row in rows:
                    row_id = None if id_column is None else str(row[id_column])
                    if wanted is not None:
                        found.add(row_id)
                        report.decisions += list(row["provenance"]["decisions"])
                    report.rows_checked += 1
                    bar.update(1)
                    intact = True
                    for source in row["provenance"]["sources"]:
                        path = auditor.source_path(source)
                        if path is not None:
                            intact &= sources.verify(path, source["sha256"], report)
                    if intact:
                        auditor.audit_row(config, split, row, report)
                    else:
                        report.checked("skipped", "row(s) not re-derived: a source file differs")
    bar.close()
    if wanted is not None:
        missing = sorted(wanted - found)
        missing = [i for i in missing if not auditor.unpublished_id(i, report)]
        if missing:
            raise AuditError(
                f"row id(s) {missing[:5]} not in {', '.join(chosen)}",
                path=dataset_dir,
                fix="pass ids of published rows (see the config's id column)",
            )
    else:
        auditor.check_whole(report)
    return report
