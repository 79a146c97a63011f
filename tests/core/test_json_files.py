"""JSON-lines input: a byte-order mark is read, a bad line is named by its number."""

from __future__ import annotations

import gzip
import json

import pytest

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.json_files import read_jsonl


def read(path):
    return list(read_jsonl(path, what="predictions", fix="write one JSON object per line"))


def test_a_byte_order_mark_is_skipped(tmp_path):
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b'{"id": "a"}\n\n{"id": "b"}\n')
    assert read(path) == [(1, {"id": "a"}), (3, {"id": "b"})]


def test_a_line_that_is_not_utf8_is_named_by_its_number(tmp_path):
    """Decoded line by line: the error names line 3 and the byte, not an offset in a buffer."""
    path = tmp_path / "p.jsonl"
    rows = [json.dumps({"id": str(k), "answer": "x" * 5000}) for k in range(2)]
    path.write_bytes(("\n".join(rows) + "\n").encode() + '{"id": "题"}\n'.encode("gbk"))
    with pytest.raises(BenchsmithError) as error:
        read(path)
    message = str(error.value)
    assert "line 3 is not UTF-8 (byte 9 of the line" in message
    assert f"{path}:3" in message and "save the file as UTF-8" in message


def test_gzip_and_bad_json_lines(tmp_path):
    path = tmp_path / "p.jsonl.gz"
    with gzip.open(path, "wb") as handle:
        handle.write(b'{"id": "a"}\n{"id": \n')
    with pytest.raises(BenchsmithError, match="line 2 is not valid JSON") as error:
        read(path)
    assert f"{path}:2" in str(error.value)
    with pytest.raises(BenchsmithError, match="predictions file not found"):
        read(tmp_path / "none.jsonl")
