"""The HF layout writer: content-addressed shards hashed while written, binary columns stored
as they are, and row groups given as dicts or as tables written alike."""

from __future__ import annotations

import hashlib
import random

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchsmith.hf.layout import shard_options, write_split

FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "image": datasets.Image(),
        "scores": [datasets.Value("int32")],
        "thumbs": datasets.Sequence(datasets.Image()),
    }
)


def rows(count: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    return [
        {
            "id": f"row-{k:04d}",
            "image": {"bytes": rng.randbytes(rng.randrange(2_000, 9_000)), "path": f"{k}.jpg"},
            "scores": [rng.randrange(100) for _ in range(rng.randrange(4))],
            "thumbs": [{"bytes": rng.randbytes(300), "path": None}],
        }
        for k in range(count)
    ]


def batches(all_rows: list[dict], size: int) -> list[list[dict]]:
    return [all_rows[k : k + size] for k in range(0, len(all_rows), size)]


def test_every_shard_is_named_and_recorded_by_the_sha256_of_its_bytes(tmp_path):
    written = write_split(tmp_path, "cfg", "test", FEATURES, batches(rows(120), 16), 200_000)
    assert len(written.files) > 1  # rolled over
    assert written.num_bytes == sum((tmp_path / f).stat().st_size for f in written.files)
    assert written.num_examples == 120
    for name in written.files:
        digest = hashlib.sha256((tmp_path / name).read_bytes()).hexdigest()
        assert written.digests[name] == digest
        assert name.endswith(f"-{digest[:16]}.parquet")
    assert not list((tmp_path / "data" / "cfg").glob(".*tmp"))  # nothing left half-written
    read = pa.concat_tables([pq.read_table(tmp_path / f) for f in written.files])
    assert read.to_pylist() == rows(120)


def test_binary_columns_are_stored_as_they_are_and_the_rest_compressed(tmp_path):
    written = write_split(tmp_path, "cfg", "test", FEATURES, batches(rows(40), 16))
    meta = pq.ParquetFile(tmp_path / written.files[0]).metadata
    chunks = {meta.row_group(0).column(i).path_in_schema: meta.row_group(0).column(i)
              for i in range(meta.num_columns)}  # fmt: skip
    for binary in ("image.bytes", "thumbs.list.element.bytes"):
        assert chunks[binary].compression == "UNCOMPRESSED"
        assert not chunks[binary].is_stats_set
        assert "RLE_DICTIONARY" not in chunks[binary].encodings
    for other in ("id", "image.path", "scores.list.element"):
        assert chunks[other].compression == "ZSTD"
        assert chunks[other].is_stats_set
    options = shard_options(FEATURES.arrow_schema)
    assert options["compression"]["image.bytes"] == "none"
    assert "image.bytes" not in options["use_dictionary"]


def test_a_table_batch_writes_the_same_bytes_as_its_rows(tmp_path):
    """A family may hand a row group as a table (MMNeedle's haystacks: the JPEG column taken
    from the render's file as it is); the shard is the same, byte for byte."""
    all_rows = rows(50, seed=3)
    as_dicts = write_split(tmp_path / "a", "cfg", "test", FEATURES, batches(all_rows, 16))
    tables = [pa.Table.from_pylist(b, schema=FEATURES.arrow_schema) for b in batches(all_rows, 16)]
    as_tables = write_split(tmp_path / "b", "cfg", "test", FEATURES, tables)
    assert as_tables.files == as_dicts.files  # the names carry the content's sha256
    for name in as_dicts.files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_a_table_batch_of_other_columns_is_refused_naming_the_config(tmp_path):
    wrong = pa.table({"id": ["x"], "image": [b"not a struct"]})
    with pytest.raises(ValueError, match="cfg/test: a batch's schema is not the config's"):
        write_split(tmp_path, "cfg", "test", FEATURES, [wrong])
