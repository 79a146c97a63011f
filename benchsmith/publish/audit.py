"""The one audit: prove where every published row came from, for any family.

``audit_dataset`` reads ``build_info.json`` and asks the family for its
:class:`~benchsmith.family.base.RowAuditor`. Then, for every row it selects (one config,
some ids, or everything):

1. every source file the row's provenance names is checked against its recorded sha256,
   each file hashed once per audit however many rows name it;
2. the family re-derives the row from those sources and its recorded parameters
   (``audit_row``) and reports every difference, naming the config, the row and the column.

A whole-dataset audit then runs the family's cross-row checks (``check_whole``). The report
says what was checked and lists every failure; the CLI exits 1 when there is one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq

from benchsmith.core.errors import AuditError
from benchsmith.core.hashing import sha256_file
from benchsmith.core.progress import progress_bar
from benchsmith.family.audit_report import AuditReport
from benchsmith.family.base import DatasetKind, RowAuditor
from benchsmith.hf.layout import splits_written
from benchsmith.hf.reader import read_build_info, split_files
from benchsmith.hf.roots import require_roots, resolve_roots
from benchsmith.publish.folder_audit import check_folder_accounts, check_rederived_info
from benchsmith.publish.row_builds import KEY as ROW_BUILDS
from benchsmith.publish.row_builds import BuildTally, count_builds

BATCH_ROWS = 32


class SourceFiles:
    """Hashes each source file once per audit and reports a missing or changed file once."""

    def __init__(self) -> None:
        self._hashes: dict[Path, str | None] = {}
        self._reported: set[tuple[Path, str]] = set()

    def sha256(self, path: Path) -> str | None:
        """The file's sha256 (None when it is missing), computed once per audit."""
        if path not in self._hashes:
            self._hashes[path] = sha256_file(path) if path.is_file() else None
        return self._hashes[path]

    def verify(self, path: Path, sha256: str, report: AuditReport) -> bool:
        actual = self.sha256(path)
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


SHARD_NAME = re.compile(r"^(?P<split>.+)-(?P<index>\d{5})-(?P<digest>[0-9a-f]{16})\.parquet$")


def check_shards(
    dataset_dir: Path, info: dict[str, Any], config: str, split: str, report: AuditReport
) -> list[Path]:
    """The split's shards as recorded in build_info, each checked against the content hash in
    its name; a shard missing, renamed, changed or not recorded is reported by file name."""
    recorded = [dataset_dir / f for f in info["configs"][config][split].get("files", [])]
    on_disk = (
        set(split_files(dataset_dir, config, split)) if (dataset_dir / "data").is_dir() else set()
    )
    for extra in sorted(on_disk - set(recorded)):
        report.fail("shard is not listed in build_info.json", config=config, path=extra)
    shards = []
    for path in recorded:
        match = SHARD_NAME.match(path.name)
        if not path.is_file():
            report.fail("shard listed in build_info.json is missing", config=config, path=path)
            continue
        digest = sha256_file(path)
        if match is None or digest[:16] != match["digest"]:
            report.fail(
                f"shard content does not match the hash in its name (sha256 {digest[:16]})",
                config=config,
                path=path,
            )
        else:
            report.checked("shards", "shard(s) match the content hash in their name")
        shards.append(path)
    return shards


def _shard_rows(
    path: Path, config: str, id_column: str | None, ids: set[str] | None, report: AuditReport
) -> Iterable[list[dict[str, Any]]]:
    """Rows of one shard in batches (with ids: only the matching rows, read with a filter so a
    lookup never loads a whole image config); a shard that does not parse is reported by name."""
    try:
        if ids is None:
            parquet = pq.ParquetFile(path, pre_buffer=False)
            for batch in parquet.iter_batches(batch_size=BATCH_ROWS):
                yield batch.to_pylist()
            return
        if id_column is None:
            return
        dataset = pads.dataset([str(path)], format="parquet")
        if id_column not in dataset.schema.names:
            return
        wanted = pads.field(id_column).cast(pa.string()).isin(sorted(ids))
        rows = dataset.to_table(filter=wanted).to_pylist()
        if rows:
            yield rows
    except (pa.ArrowException, OSError) as exc:
        reason = " ".join(str(exc).split())  # one line: pyarrow's messages span several
        report.fail(
            f"shard does not parse ({type(exc).__name__}: {reason})", config=config, path=path
        )


def audit_dataset(
    dataset_dir: str | Path,
    kind: DatasetKind,
    *,
    configs: list[str] | None = None,
    ids: list[str] | None = None,
    roots: Mapping[str, str] | None = None,
    workers: int = 1,
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
    resolved = {  # the roots this family's audit reads (a plan's scratch folders are not sources)
        name: path
        for name, path in resolve_roots(info.get("roots"), dataset_dir, roots).items()
        if name in kind.root_names
    }
    require_roots(resolved, info.get("roots"), dataset_dir)
    auditor: RowAuditor = kind.auditor(dataset_dir, info, resolved)
    wanted = {str(i) for i in ids} if ids else None
    auditor.whole = wanted is None
    auditor.ids = None if wanted is None else frozenset(wanted)
    chosen = [c for c in available if (not configs or c in configs) and auditor.audits_rows(c)]
    prefix = f"{configs[0]}/" if configs and len(configs) == 1 else ""
    subject = ", ".join(i if i.startswith(prefix) else prefix + i for i in ids or []) or ", ".join(
        configs or ["all configs"]
    )
    report = AuditReport(subject)
    sources = SourceFiles()
    auditor.files = sources
    auditor.configs, auditor.workers = tuple(chosen), max(1, int(workers))
    if wanted is not None:
        _refuse_unknown_ids(dataset_dir, info, chosen, available, auditor, wanted)
    auditor.check_dataset(report)
    found: set[str] = set()
    total = (
        None
        if wanted
        else sum(info["configs"][c][s]["num_examples"] for c in chosen for s in available[c])
    )
    whole = wanted is None and not configs
    builds = BuildTally(info.get(ROW_BUILDS) if whole else None)
    bar = progress_bar(total=total, desc=f"audit {dataset_dir.name}", unit="row")
    for config in chosen:
        id_column = auditor.id_column(config)
        for split in available[config]:
            for shard in check_shards(dataset_dir, info, config, split, report):
                for rows in _shard_rows(shard, config, id_column, wanted, report):
                    for row in rows:
                        if wanted is not None:
                            found.add(str(row[id_column]))
                            report.decisions += list(row["provenance"]["decisions"])
                        report.rows_checked += 1
                        builds.add(config, row.get(id_column or ""), row.get("provenance"))
                        bar.update(1)
                        _audit_row(auditor, sources, config, split, row, report)
    bar.close()
    if wanted is not None:
        missing = sorted(wanted - found)
        missing = [i for i in missing if not auditor.unpublished_id(i, report)]
        if missing:
            raise _unknown_ids(missing, dataset_dir, chosen, available, auditor)
    else:
        auditor.check_whole(report)
        _report_row_order(auditor, report)
        if whole:  # the whole folder: its own accounts too (counts, card, Croissant, builds)
            check_rederived_info(info, auditor.rederived_info(), report)
            check_folder_accounts(dataset_dir, info, report, auditor.card_recipe())
            unread = [
                w for w in splits_written(info.get("configs")) if w.config not in chosen
            ]  # copied configs
            builds.add_recorded(count_builds(dataset_dir, unread))
            builds.report(report)
    return report


def _report_row_order(auditor: RowAuditor, report: AuditReport) -> None:
    """Rows whose re-derived counterpart sits elsewhere in the split: the first of each split
    is named (a reordering moves many rows; one line says where it starts)."""
    named: set[tuple[str, str]] = set()
    for config, split, position, row_id, expected in auditor.__dict__.get("order_differences", []):
        if (config, split) not in named:
            named.add((config, split))
            report.fail(f"row order differs from the re-derivation: row {position} of split "
                        f"{split!r} is {row_id!r}, the re-derived row there is {expected!r}",
                        config=config)  # fmt: skip
        else:
            report.checked("order", "row(s) out of their re-derived place (first one named)")


def _unknown_ids(
    missing: list[str],
    dataset_dir: Path,
    chosen: list[str],
    available: Mapping[str, list[str]],
    auditor: RowAuditor,
) -> AuditError:
    return AuditError(
        f"row id(s) {missing[:5]} not in {', '.join(chosen)}",
        path=dataset_dir,
        fix="pass ids of published rows; "
        + id_examples(dataset_dir, chosen, available, auditor.id_column),
    )


def _refuse_unknown_ids(
    dataset_dir: Path,
    info: dict[str, Any],
    chosen: list[str],
    available: Mapping[str, list[str]],
    auditor: RowAuditor,
    wanted: set[str],
) -> None:
    """Refuse, before anything is re-derived, the ids that no published row has and the
    auditor could not explain: a typo in ``--id`` is answered at once, not after a rebuild.
    Only the id column is read; a shard that does not read leaves the question to the audit,
    which reports it by name."""
    present: set[str] = set()
    for config in chosen:
        column = auditor.id_column(config)
        for split in available[config] if column else ():
            for name in info["configs"][config][split].get("files", []):
                try:
                    dataset = pads.dataset([str(dataset_dir / name)], format="parquet")
                    if column not in dataset.schema.names:
                        continue
                    wanted_rows = pads.field(column).cast(pa.string()).isin(sorted(wanted))
                    table = dataset.to_table(columns=[column], filter=wanted_rows)
                except (pa.ArrowException, OSError):
                    return
                present.update(str(v) for v in table.column(0).to_pylist())
    unknown = sorted(i for i in wanted - present if not auditor.may_explain_unpublished(i))
    if unknown:
        raise _unknown_ids(unknown, dataset_dir, chosen, available, auditor)


def id_examples(
    dataset_dir: Path,
    chosen: list[str],
    available: Mapping[str, list[str]],
    id_column: Callable[[str], str | None],
    shown: int = 3,
) -> str:
    """What ids look like, per config: the id column and its first values."""
    parts = []
    for config in chosen[:3]:
        column = id_column(config)
        if column is None:
            parts.append(f"{config} has no id column (audit it whole: --config {config})")
            continue
        files = split_files(dataset_dir, config, available[config][0])
        first = pq.ParquetFile(files[0]).read_row_group(0, columns=[column]).column(0)
        values = ", ".join(repr(str(v)) for v in first.to_pylist()[:shown])
        parts.append(f"{config} ids are its `{column}` column, e.g. {values}")
    more = f" (and {len(chosen) - 3} more configs)" if len(chosen) > 3 else ""
    return "; ".join(parts) + more


def _audit_row(
    auditor: RowAuditor,
    sources: SourceFiles,
    config: str,
    split: str,
    row: dict[str, Any],
    report: AuditReport,
) -> None:
    """Verify the row's own source files, then let the family re-derive and compare it."""
    intact = True
    for source in row["provenance"]["sources"]:
        path = auditor.source_path(source)
        if path is not None:
            intact &= sources.verify(path, source["sha256"], report)
    if intact:
        auditor.audit_row(config, split, row, report)
    else:
        auditor.met_unchecked(config, split, row)
        report.checked("skipped", "row(s) not re-derived: a source file differs")
