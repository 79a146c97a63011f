"""The VLMEvalKit TSV's lines: what ``csv.writer`` would write, byte for byte, however a field
is made (the export writes them itself, for speed, and pandas reads them as csv does)."""

from __future__ import annotations

import base64
import csv
import io
import random

import pandas as pd

from benchsmith.exports.vlmevalkit import tsv_line

ALPHABET = ["a", "Z", "0", " ", "\t", "\n", "\r", '"', "'", ",", "\\", "中", "é", "=", "/", "+"]


def _csv_line(fields: list[object]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter="\t", lineterminator="\n").writerow(fields)
    return buffer.getvalue()


def _field(rng: random.Random) -> object:
    kind = rng.randrange(6)
    if kind == 0:
        return rng.randrange(-5, 10_000)
    if kind == 1:
        return None
    if kind == 2:
        return ""
    if kind == 3:  # a picture cell: base64, or a list of them as the export writes it
        pictures = [base64.b64encode(rng.randbytes(rng.randrange(1, 300))).decode()
                    for _ in range(rng.randrange(1, 4))]  # fmt: skip
        return pictures[0] if len(pictures) == 1 else repr(pictures)
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 12)))


def test_every_line_is_what_csv_writes():
    rng = random.Random(20261128)
    quoted = 0
    for _ in range(3000):
        fields = [_field(rng) for _ in range(rng.randrange(1, 9))]
        assert tsv_line(fields) == _csv_line(fields), fields
        quoted += '"' in _csv_line(fields)
    assert quoted > 300  # the rows that need quoting were really tried
    for fields in ([""], [None], ["", ""], ["\r"], ['"'], ["a\tb", 1]):
        assert tsv_line(fields) == _csv_line(fields), fields


def test_pandas_reads_back_every_field():
    rows = [[0, "s-1", "base64==", "What is 1+1?\tTab", "2", 'say "two"', None],
            [1, "s-2", "x", "line\nbreak", "", "中文", "l2"]]  # fmt: skip
    text = "".join(tsv_line(["index", "id", "image", "question", "A", "answer", "l2"]))
    text += "".join(tsv_line(row) for row in rows)
    frame = pd.read_csv(io.StringIO(text), sep="\t", keep_default_na=False, dtype=str)
    assert frame["question"].tolist() == ["What is 1+1?\tTab", "line\nbreak"]
    assert frame["answer"].tolist() == ['say "two"', "中文"]
    assert frame["l2"].tolist() == ["", "l2"]
