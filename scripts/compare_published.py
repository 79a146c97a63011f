"""Compare the rows of two published dataset folders, config by config, split by split.

    python scripts/compare_published.py OLD_DIR NEW_DIR [--ignore provenance.code_revision ...]

Both folders are read with pyarrow (every ``data/<config>/<split>-*.parquet`` shard, in name
order); rows are compared value by value, images as bytes. By default the provenance fields
that name the code (``provenance.code_revision``, ``provenance.builder_version``) are ignored,
so two builds of the same data by different commits compare equal; so is the ``sha256`` of a
provenance source that is itself a benchsmith row (``dataset: benchsmith/...``, as curated rows
record their source row): that digest covers the source row's code revision too. Run
``benchsmith audit`` on the new folder to check those digests against the new source rows. Nested folders holding a
``build_info.json`` (``published/curated/<name>``) are compared too. Exit 0 when every row is
equal, 1 when something differs (each difference is listed), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

DEFAULT_IGNORED = ("provenance.code_revision", "provenance.builder_version")


def dataset_dirs(root: Path) -> Iterator[Path]:
    """``root`` and every folder below it that holds a build_info.json, sorted."""
    for info in sorted(root.rglob("build_info.json")):
        yield info.parent


def splits(dataset: Path) -> dict[tuple[str, str], list[Path]]:
    found: dict[tuple[str, str], list[Path]] = {}
    for shard in sorted((dataset / "data").glob("*/*.parquet")):
        split = shard.name.split("-", 1)[0]
        found.setdefault((shard.parent.name, split), []).append(shard)
    return found


def rows(shards: list[Path]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for shard in shards:
        out.extend(pq.read_table(shard).to_pylist())
    return out


def masked(row: dict[str, Any], ignored: tuple[str, ...]) -> dict[str, Any]:
    row = dict(row)
    provenance = row.get("provenance")
    if isinstance(provenance, dict) and provenance.get("sources"):
        sources = [
            {k: v for k, v in s.items() if k != "sha256"}
            if str(s.get("dataset", "")).startswith("benchsmith/")
            else s
            for s in provenance["sources"]
        ]
        row["provenance"] = {**provenance, "sources": sources}
    for path in ignored:
        head, _, field = path.partition(".")
        if field and isinstance(row.get(head), dict):
            row[head] = {k: v for k, v in row[head].items() if k != field}
        elif not field:
            row.pop(head, None)
    return row


def compare(old: Path, new: Path, ignored: tuple[str, ...]) -> list[str]:
    problems: list[str] = []
    old_sets = {d.relative_to(old) for d in dataset_dirs(old)}
    new_sets = {d.relative_to(new) for d in dataset_dirs(new)}
    for missing in sorted(old_sets ^ new_sets):
        problems.append(
            f"{missing}: dataset folder only in {'old' if missing in old_sets else 'new'}"
        )
    for rel in sorted(old_sets & new_sets):
        a, b = splits(old / rel), splits(new / rel)
        for key in sorted(set(a) ^ set(b)):
            problems.append(f"{rel}: config/split {key} only in {'old' if key in a else 'new'}")
        for key in sorted(set(a) & set(b)):
            left, right = rows(a[key]), rows(b[key])
            where = f"{rel}/{key[0]}/{key[1]}"
            if len(left) != len(right):
                problems.append(f"{where}: {len(left)} rows vs {len(right)}")
                continue
            for index, (x, y) in enumerate(zip(left, right, strict=True)):
                x, y = masked(x, ignored), masked(y, ignored)
                if x != y:
                    columns = sorted(k for k in set(x) | set(y) if x.get(k) != y.get(k))
                    problems.append(f"{where}: row {index} differs in {', '.join(columns)}")
            differs = bool(problems) and problems[-1].startswith(where)
            print(f"{where}: {'DIFFERS' if differs else f'{len(left)} rows equal'}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument(
        "--ignore",
        nargs="*",
        default=list(DEFAULT_IGNORED),
        metavar="COLUMN[.FIELD]",
        help=f"columns or struct fields to ignore (default: {' '.join(DEFAULT_IGNORED)})",
    )
    args = parser.parse_args(argv)
    for folder in (args.old, args.new):
        if not folder.is_dir():
            parser.error(f"not a folder: {folder}")
    problems = compare(args.old, args.new, tuple(args.ignore))
    for problem in problems:
        print(f"DIFF {problem}")
    print("equal" if not problems else f"{len(problems)} difference(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
