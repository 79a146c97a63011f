"""VLMEvalKit's prediction files as a benchsmith predictions JSONL, so ``benchsmith score`` scores
a VLMEvalKit run with the family's scorer (its own ``CustomVQADataset.evaluate`` raises
``NotImplementedError``, so MMNeedle's and VL-ICL's answers cannot be scored inside it).

VLMEvalKit writes a run's answers as the dataset's rows, our exported TSV's columns less
``image``, plus ``prediction``: ``{model}_{dataset}.xlsx`` by default, ``.tsv`` or ``.json``
with ``PRED_FORMAT`` (``vlmeval/inference.py``, ``vlmeval/smp/file.py``, read at e8e78f05). The
export's ``id`` (the published sample id) and ``config`` columns join each answer to its row:
the answers of the scored config become the scorer's own prediction rows (its keys, from
``Scorer.reference_predictions``; VL-ICL's are zero-shot, seed 0, as the export asks), with the
``prediction`` as the response. A config sample VLMEvalKit did not answer is missing, as in any
predictions file.
"""

from __future__ import annotations

import csv
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchsmith.core.errors import BenchsmithError

FORMATS = (".xlsx", ".tsv", ".json")
NEEDED = ("id", "prediction")


@dataclass
class Joined:
    """What a conversion read and kept."""

    read: int = 0  # answer rows in the files
    joined: int = 0  # ... that are samples of the config
    other_configs: int = 0  # ... exported from another config (the config column says so)
    unknown: int = 0  # ... of this config whose id is not one of its samples


def _cell(value: Any) -> str | None:
    if value is None or (isinstance(value, float) and value != value):  # empty, or NaN
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))  # a spreadsheet's number for an integer id
    return str(value)


def read_answer_rows(path: Path) -> list[dict[str, str | None]]:
    """A VLMEvalKit prediction file's rows, every cell a string (or None when empty)."""
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise BenchsmithError(f"not a VLMEvalKit prediction file ({suffix or 'no suffix'})",
                              path=path, fix=f"give the {'/'.join(FORMATS)} file VLMEvalKit "
                              "wrote for the exported dataset ({model}_{dataset}.xlsx)")  # fmt: skip
    if not path.is_file():
        raise BenchsmithError("VLMEvalKit prediction file not found", path=path,
                              fix="check the path (VLMEvalKit writes it under its work dir)")  # fmt: skip
    try:
        if suffix == ".tsv":
            csv.field_size_limit(sys.maxsize)
            with path.open(encoding="utf-8", newline="") as handle:
                rows = [dict(r) for r in csv.DictReader(handle, delimiter="\t")]
        elif suffix == ".json":
            rows = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                raise ValueError("not a list of row objects")
        else:
            rows = _read_xlsx(path)
    except (ValueError, UnicodeDecodeError, csv.Error) as exc:
        raise BenchsmithError(f"cannot read this VLMEvalKit prediction file: {exc}", path=path,
                              fix="give the file VLMEvalKit wrote, unedited") from exc  # fmt: skip
    if rows and (missing := [c for c in NEEDED if c not in rows[0]]):
        raise BenchsmithError(
            f"no {', '.join(missing)} column: not VLMEvalKit's predictions for a benchsmith "
            "export (the exported TSV itself has no prediction column)",
            path=path, fix="give the file VLMEvalKit wrote after running the exported TSV "
            "({model}_{dataset}.xlsx in its work dir)",
        )  # fmt: skip
    return [{k: _cell(v) for k, v in r.items()} for r in rows]


def _read_xlsx(path: Path) -> list[dict[str, Any]]:
    try:
        import openpyxl
    except ImportError as exc:  # a dependency of benchsmith: only a broken install lacks it
        raise BenchsmithError("reading .xlsx needs openpyxl", path=path,
                              fix="pip install openpyxl, or run VLMEvalKit with PRED_FORMAT=tsv") from exc  # fmt: skip
    try:
        book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises zipfile/KeyError/... on a damaged file
        raise ValueError(f"not a readable .xlsx ({type(exc).__name__}: {exc})") from exc
    sheet = book.worksheets[0]
    lines = sheet.iter_rows(values_only=True)
    header = [str(h) for h in next(lines, ())]
    rows = [dict(zip(header, line, strict=False)) for line in lines]
    book.close()
    return rows


def to_predictions(files: list[Path], keys: list[dict[str, Any]], config: str,
                   out: Path) -> Joined:  # fmt: skip
    """Write the answers of ``config`` in ``files`` as a predictions JSONL at ``out``.

    ``keys`` are the scorer's prediction rows for the config (``reference_predictions``): a
    row's first value is its sample id, the export's ``id``. Rows with a ``config`` column
    naming another config are skipped and counted; a file without the column (an export before
    it had one) is read whole, and its other configs' ids count as unknown."""
    by_id = {str(next(iter(k.values()))): k for k in keys}
    joined, seen = Joined(), set()
    with out.open("w", encoding="utf-8") as handle:
        for path in files:
            for row in read_answer_rows(path):
                joined.read += 1
                if row.get("config") not in (None, config):
                    joined.other_configs += 1
                    continue
                key = by_id.get(row["id"] or "")
                if key is None:
                    joined.unknown += 1
                    continue
                if row["id"] in seen:
                    raise BenchsmithError(
                        f"sample {row['id']!r} of config {config!r} is answered twice",
                        path=path, fix="give each VLMEvalKit prediction file once",
                    )  # fmt: skip
                seen.add(row["id"])
                joined.joined += 1
                line = {k: v for k, v in key.items() if k != "response"}
                handle.write(json.dumps({**line, "response": row["prediction"]},
                                        ensure_ascii=False) + "\n")  # fmt: skip
    return joined
