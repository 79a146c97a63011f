"""``croissant.json`` next to every card: Croissant 1.1 that ``mlcroissant`` validates and reads.

Offline: the JSON-LD carries its own ``@context``; the records are read from the local parquet.
"""

from __future__ import annotations

import hashlib
import itertools
import json

import datasets
import mlcroissant as mlc
import pyarrow as pa
import pytest

from benchsmith.hf.reader import read_build_info, read_columns

FOLDERS = ["mmneedle", "vlicl", "mmiu", "multi", "curated/vlicl_clevr_query"]
RAI = ("rai:dataCollection", "rai:dataPreprocessingProtocol", "rai:dataLimitations",
       "rai:dataBiases", "rai:dataLicense")  # fmt: skip


@pytest.mark.parametrize("name", FOLDERS)
def test_croissant_validates_and_reads(name, sample_project):
    folder = sample_project / "published" / name
    path = folder / "croissant.json"
    document = json.loads(path.read_text("utf-8"))
    assert "http://mlcommons.org/croissant/1.1" in document["conformsTo"]
    assert all(document.get(k) for k in RAI), [k for k in RAI if not document.get(k)]
    sources = document["prov:wasDerivedFrom"]
    assert sources and all(s.get("license") for s in sources)
    assert document["version"] == read_build_info(folder)["version"]
    for item in document["distribution"]:
        if item["@type"] == "cr:FileObject":
            data = (folder / item["contentUrl"]).read_bytes()
            assert hashlib.sha256(data).hexdigest() == item["sha256"]

    dataset = mlc.Dataset(jsonld=str(path))
    assert not dataset.metadata.ctx.issues.errors
    info = read_build_info(folder)
    record_sets = [r["@id"] for r in document["recordSet"]]
    assert set(record_sets) == set(info["configs"])
    for record_set in record_sets:
        fields = {f["name"]: f for f in next(r for r in document["recordSet"]
                                             if r["@id"] == record_set)["field"]}  # fmt: skip
        assert fields["provenance"]["equivalentProperty"] == "prov:wasDerivedFrom"
        records = list(itertools.islice(dataset.records(record_set=record_set), 3))
        assert records, record_set
        split = records[0][f"{record_set}/split"].decode()
        assert split in info["configs"][record_set]
        lineage = records[0][f"{record_set}/provenance"]
        assert lineage[f"{record_set}/provenance/family"].decode() == info.get(
            "source_family", lineage[f"{record_set}/provenance/family"].decode())  # fmt: skip
        # the published rows, read from the parquet as the audit reads them (that
        # `load_dataset` loads every config is tests/test_contracts.py's)
        first_column = next(n for n in fields if n not in ("split",))
        column = read_columns(folder, record_set, split, [first_column])[first_column]
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            read = {r[f"{record_set}/{first_column}"].decode() for r in records
                    if r[f"{record_set}/split"].decode() == split}  # fmt: skip
            assert read <= set(column.to_pylist()), (record_set, read)


def test_images_read_through_croissant_are_the_published_bytes(sample_project):
    folder = sample_project / "published" / "vlicl"
    dataset = mlc.Dataset(jsonld=str(folder / "croissant.json"))
    [record] = list(itertools.islice(dataset.records(record_set="clevr"), 1))
    rows = datasets.load_dataset(str(folder), "clevr", split=record["clevr/split"].decode())
    row = rows[rows["id"].index(record["clevr/id"].decode())]
    ours = [image.convert("RGB").tobytes() for image in record["clevr/images"]]
    assert ours == [image.convert("RGB").tobytes() for image in row["images"]]
