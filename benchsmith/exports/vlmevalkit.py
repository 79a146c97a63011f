"""VLMEvalKit's dataset TSV from a published folder, through the family interface.

VLMEvalKit reads a custom multiple-choice or short-answer dataset as one TSV (pandas,
tab-separated): ``index``, ``image`` (base64 of the image file; for several images a Python list
literal of base64 strings, which its ``toliststr`` reads), ``question``, option columns ``A``,
``B``, ... (empty where a row has fewer options; none at all for short answer), ``answer`` (the
letter, or the answer text), ``category`` and ``l2-category``. We add ``id`` (our sample id) and
``config``: VLMEvalKit keeps every column in its prediction file, so ``benchsmith score
--from-vlmevalkit`` joins each answer back to the published row (and its provenance).

Rows come from ``Family.harness_rows``: MMIU and MULTI map their own columns (MULTI exports SA and
FB and counts what it leaves out), the others the generic reading of their columns.

A row without an image cannot sit in that TSV: VLMEvalKit's image datasets drop every row whose
``image`` is empty (``ImageBaseDataset(skip_noimg=True)``, ``vlmeval/dataset/image_base.py``),
silently. Text-only rows go to TSVs beside it, in the two forms VLMEvalKit reads without an
image (``build_dataset`` in ``vlmeval/dataset/__init__.py`` picks the class by the columns):

* ``NAME_text.tsv``: multiple choice, no image column: a text multiple-choice dataset
  (``CustomTextMCQDataset``, which scores like the image one);
* ``NAME_text_open.tsv``: short answer, with ``image_path`` ``[]``: a custom short-answer dataset
  whose rows list no picture (``toliststr("[]")`` is an empty list, so ``build_prompt`` sends
  the question alone; without the column it would look for one and fail).
"""

from __future__ import annotations

import base64
import contextlib
import csv
import io
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.core.atomic import atomic_path
from benchsmith.family.requests import HarnessRow


def image_cell(images: tuple[bytes, ...]) -> str:
    encoded = [base64.b64encode(i).decode("ascii") for i in images]
    if len(encoded) == 1:
        return encoded[0]
    return repr(encoded) if encoded else ""


@dataclass
class TsvSummary:
    rows: int = 0  # in every file written
    multiple_choice: int = 0
    short_answer: int = 0
    by_config: dict[str, int] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)  # form -> file written
    rows_by_form: dict[str, int] = field(default_factory=dict)


FORMS = ("image", "text", "text_open")  # the main TSV, text multiple choice, text short answer
_QUOTED_BY_CSV = ("\t", "\n", '"')  # what csv.writer quotes on every Python we support


def _cell(value: object) -> str:
    text = "" if value is None else value if isinstance(value, str) else str(value)
    if any(c in text for c in _QUOTED_BY_CSV):
        return '"' + text.replace('"', '""') + '"'
    return text


def tsv_line(fields: list[object]) -> str:
    """One TSV line, byte for byte what ``csv.writer(delimiter="\t", lineterminator="\n")``
    writes. Why not the writer itself: it looks at each character of every field, and an
    MMNeedle row is megabytes of base64 (a 150 MB export spent 5 s in it), where ``in`` and
    ``join`` are memchr and memcpy. A field with a tab, newline or quote is quoted as csv
    quotes it (quotes doubled); a row with a carriage return (which csv quotes or not
    depending on the Python) and a lone field go through ``csv`` itself."""
    if len(fields) == 1 or any(isinstance(f, str) and "\r" in f for f in fields):
        buffer = io.StringIO()
        csv.writer(buffer, delimiter="\t", lineterminator="\n").writerow(fields)
        return buffer.getvalue()
    return "\t".join(_cell(f) for f in fields) + "\n"


def form_of(row: HarnessRow) -> str:
    if row.images:
        return "image"
    return "text" if row.options else "text_open"


def tsv_paths(out: str | Path) -> dict[str, Path]:
    """Each form's file: ``out`` itself for rows with images, ``NAME_text.tsv`` and
    ``NAME_text_open.tsv`` beside it (VLMEvalKit names a custom dataset after its file)."""
    out = Path(out)
    suffix = out.suffix or ".tsv"
    return {"image": out, "text": out.with_name(f"{out.stem}_text{suffix}"),
            "text_open": out.with_name(f"{out.stem}_text_open{suffix}")}  # fmt: skip


def _header(form: str, letters: list[str]) -> list[str]:
    picture = {"image": ["image"], "text": [], "text_open": ["image_path"]}[form]
    options = [] if form == "text_open" else letters
    return ["index", "id", "config", *picture, "question", *options, "answer", "category",
            "l2-category"]  # fmt: skip


def write_tsv(rows: Callable[[], Iterable[tuple[str, HarnessRow]]], out: str | Path
              ) -> TsvSummary:  # fmt: skip
    """Write the ``(config, row)`` pairs ``rows()`` yields atomically: rows with images to
    ``out``, text-only rows to the :func:`tsv_paths` of their form (a file only when it has
    rows; ``out`` always). ``rows`` is called twice: once to size the option columns and see
    which forms occur, once to write, so no more than one row's images are held in memory."""
    width, forms = 0, {"image"}
    for _, row in rows():
        width = max(width, len(row.options))
        forms.add(form_of(row))
    letters = [chr(65 + k) for k in range(width)]
    paths = tsv_paths(out)
    summary = TsvSummary(files={f: paths[f] for f in FORMS if f in forms})
    with contextlib.ExitStack() as files:
        handles = {}
        for form, path in summary.files.items():
            scratch = files.enter_context(atomic_path(path))
            handle = files.enter_context(open(scratch, "w", encoding="utf-8", newline=""))
            handles[form] = handle
            handle.write(tsv_line(_header(form, letters)))
        for config, row in rows():
            form = form_of(row)
            picture = {"image": [image_cell(row.images)], "text": [], "text_open": ["[]"]}[form]
            options = [] if form == "text_open" else [*row.options,
                                                      *([""] * (width - len(row.options)))]  # fmt: skip
            index = summary.rows_by_form.get(form, 0)
            handles[form].write(tsv_line([index, row.id, config, *picture, row.question,
                                          *options, row.answer, row.category or config,
                                          row.l2_category]))  # fmt: skip
            summary.rows_by_form[form] = index + 1
            summary.rows += 1
            summary.multiple_choice += bool(row.options)
            summary.short_answer += not row.options
            summary.by_config[config] = summary.by_config.get(config, 0) + 1
    return summary
