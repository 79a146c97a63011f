"""Converting a Hugging Face parquet copy of MiniImageNet into the Ravi-Larochelle layout."""

from __future__ import annotations

import io
import json
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from benchsmith.core.errors import BenchsmithError, SourceError
from benchsmith.sources.miniimagenet.parquet import (
    CONVERSION_RECORD,
    RENUMBER_START,
    label_names,
    miniimagenet_from_hf_parquet,
    split_from_path,
)
from benchsmith.sources.miniimagenet.reader import (
    SPLITS,
    MiniImageNet,
    read_miniimagenet,
)
from benchsmith.sources.miniimagenet.sample import write_sample_miniimagenet

HF_SPLIT = {"train": "train", "val": "validation", "test": "test"}


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> MiniImageNet:
    root = write_sample_miniimagenet(
        tmp_path_factory.mktemp("src") / "mini",
        classes_per_split={"train": 3, "val": 2, "test": 3},
        images_per_class=4,
    )
    return read_miniimagenet(root)


def write_with_datasets(source: MiniImageNet, folder: Path, *, keep_paths: bool) -> list[Path]:
    """``datasets``-exported parquet: Image struct + ClassLabel ints, split in the file name."""
    labels = sorted(label for split in SPLITS for label in source.classes(split))
    features = datasets.Features(
        {"image": datasets.Image(), "label": datasets.ClassLabel(names=labels)}
    )
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    for split in SPLITS:
        images = source.splits[split]
        paths = [i.filename if keep_paths else f"img_{k}.JPEG" for k, i in enumerate(images)]
        table = {
            "image": [
                {"bytes": i.path.read_bytes(), "path": p}
                for i, p in zip(images, paths, strict=True)
            ],
            "label": [labels.index(i.label) for i in images],
        }
        path = folder / f"{HF_SPLIT[split]}-00000-of-00001.parquet"
        datasets.Dataset.from_dict(table, features=features).to_parquet(str(path))
        files.append(path)
    return files


def png_bytes(path: Path) -> bytes:
    buffer = io.BytesIO()
    with Image.open(path) as decoded:
        decoded.save(buffer, "PNG")
    return buffer.getvalue()


def write_with_pyarrow(source: MiniImageNet, path: Path, *, split_names: dict[str, str]) -> Path:
    """One pyarrow-written file: string wnid labels, a `split` column, PNG image bytes."""
    rows = [image for split in SPLITS for image in source.splits[split]]
    image_type = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    table = pa.table(
        {
            "image": pa.array(
                [{"bytes": png_bytes(i.path), "path": None} for i in rows], type=image_type
            ),
            "label": [i.label for i in rows],
            "split": [split_names[i.split] for i in rows],
        }
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(table, path)
    return path


def test_datasets_export_round_trips_bytes_and_names(source: MiniImageNet, tmp_path: Path) -> None:
    files = write_with_datasets(source, tmp_path / "hf" / "data", keep_paths=True)
    out = miniimagenet_from_hf_parquet(tmp_path / "hf", tmp_path / "ravi")
    assert out == tmp_path / "ravi"
    mini = read_miniimagenet(out, expect_classes={"train": 3, "val": 2, "test": 3})
    assert mini.layout == "flat"
    for split in SPLITS:
        converted = [(i.filename, i.label) for i in mini.splits[split]]
        assert converted == [(i.filename, i.label) for i in source.splits[split]]
        for original, copy in zip(source.splits[split], mini.splits[split], strict=True):
            assert copy.path.read_bytes() == original.path.read_bytes()  # JPEG kept as is
    record = json.loads((out / CONVERSION_RECORD).read_text())
    assert [Path(f["file"]).name for f in record["source_files"]] == sorted(f.name for f in files)
    assert record["renumbered"] == 0 and record["reencoded_to_jpeg"] == 0
    assert not list(tmp_path.glob(".ravi.tmp-*"))


def test_non_ravi_paths_are_renumbered_per_class(source: MiniImageNet, tmp_path: Path) -> None:
    write_with_datasets(source, tmp_path / "hf", keep_paths=False)
    files = sorted((tmp_path / "hf").glob("*.parquet"))
    mini = read_miniimagenet(miniimagenet_from_hf_parquet(files, tmp_path / "ravi"))
    for split in SPLITS:
        for label, images in mini.classes(split).items():
            numbers = sorted(int(i.filename[len(label) : -4]) for i in images)
            assert numbers == list(range(RENUMBER_START, RENUMBER_START + len(images)))
    assert json.loads((tmp_path / "ravi" / CONVERSION_RECORD).read_text())["renumbered"] == 32


def test_split_column_string_labels_and_png_reencoding(
    source: MiniImageNet, tmp_path: Path
) -> None:
    names = {"train": "train", "val": "valid", "test": "test"}
    path = write_with_pyarrow(source, tmp_path / "all.parquet", split_names=names)
    out = miniimagenet_from_hf_parquet(path, tmp_path / "ravi")
    mini = read_miniimagenet(out, expect_images_per_class=4)
    assert {s: len(mini.splits[s]) for s in SPLITS} == {s: len(source.splits[s]) for s in SPLITS}
    assert [i.label for i in mini.splits["val"]] == [i.label for i in source.splits["val"]]
    with Image.open(mini.splits["test"][0].path) as decoded:
        assert decoded.format == "JPEG" and decoded.size == (84, 84)
    assert json.loads((out / CONVERSION_RECORD).read_text())["reencoded_to_jpeg"] == 32


def test_parent_folder_names_the_split(source: MiniImageNet, tmp_path: Path) -> None:
    for path in write_with_datasets(source, tmp_path / "flat", keep_paths=True):
        split = path.name.split("-")[0]
        target = tmp_path / "repo" / "default" / split / "0000.parquet"
        target.parent.mkdir(parents=True)
        path.rename(target)
    (tmp_path / "repo" / ".cache").mkdir()
    (tmp_path / "repo" / ".cache" / "junk.parquet").write_bytes(b"not parquet")  # skipped
    mini = read_miniimagenet(miniimagenet_from_hf_parquet(tmp_path / "repo", tmp_path / "ravi"))
    assert len(mini.classes("val")) == 2


def test_split_from_path_and_label_names() -> None:
    assert split_from_path(Path("data/train-00000-of-00003.parquet")) == "train"
    assert split_from_path(Path("validation-00000-of-00001.parquet")) == "val"
    assert split_from_path(Path("x/test/0000.parquet")) == "test"
    assert split_from_path(Path("x/other/0000.parquet")) is None
    schema = pa.schema([("label", pa.int64())]).with_metadata(
        {b"huggingface": json.dumps({"info": {"features": {"label": {"names": ["a", "b"]}}}})}
    )
    assert label_names(schema) == ["a", "b"]
    assert label_names(pa.schema([("label", pa.int64())])) is None


def test_class_in_two_splits_fails_and_writes_nothing(source: MiniImageNet, tmp_path: Path) -> None:
    path = write_with_pyarrow(
        source,
        tmp_path / "resplit.parquet",
        split_names={"train": "train", "val": "train", "test": "test"},
    )
    table = pq.read_table(path)
    moved = table.slice(0, 1).set_column(2, "split", pa.array(["validation"]))
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.concat_tables([table, moved]), bad)
    label = table.column("label")[0].as_py()
    with pytest.raises(
        SourceError, match=f"class {label} is in split val here but in train"
    ) as info:
        miniimagenet_from_hf_parquet(bad, tmp_path / "ravi")
    assert str(bad) in str(info.value)
    assert not (tmp_path / "ravi").exists() and not list(tmp_path.glob(".ravi.tmp-*"))


def test_integer_labels_without_names(tmp_path: Path) -> None:
    path = tmp_path / "train-00000-of-00001.parquet"
    pq.write_table(pa.table({"image": [b"\xff\xd8\xff\xe0fake"], "label": [3]}), path)
    with pytest.raises(SourceError, match="integer label 3 but no ClassLabel names") as info:
        miniimagenet_from_hf_parquet(path, tmp_path / "ravi")
    assert str(path) in str(info.value)


def test_no_split_anywhere(tmp_path: Path) -> None:
    path = tmp_path / "part-0.parquet"
    pq.write_table(pa.table({"image": [b"\xff\xd8\xff"], "label": ["n01532829"]}), path)
    with pytest.raises(SourceError, match="cannot tell the split"):
        miniimagenet_from_hf_parquet(path, tmp_path / "ravi")


def test_missing_columns_and_bytes(tmp_path: Path) -> None:
    no_image = tmp_path / "train-a.parquet"
    pq.write_table(pa.table({"img": [b"x"], "label": ["n01532829"]}), no_image)
    with pytest.raises(SourceError, match=r"lacks column\(s\) \['image'\]"):
        miniimagenet_from_hf_parquet(no_image, tmp_path / "ravi")
    no_bytes = tmp_path / "train-b.parquet"
    image_type = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
    pq.write_table(
        pa.table(
            {
                "image": pa.array([{"bytes": None, "path": "/elsewhere/x.jpg"}], type=image_type),
                "label": ["n01532829"],
            }
        ),
        no_bytes,
    )
    with pytest.raises(SourceError, match="no embedded bytes"):
        miniimagenet_from_hf_parquet(no_bytes, tmp_path / "ravi")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SourceError, match="no \\*.parquet files"):
        miniimagenet_from_hf_parquet(tmp_path / "empty", tmp_path / "ravi")


def test_rerun_replaces_the_output(source: MiniImageNet, tmp_path: Path) -> None:
    files = write_with_datasets(source, tmp_path / "hf", keep_paths=True)
    out = miniimagenet_from_hf_parquet(files, tmp_path / "ravi")
    (out / "notes.txt").write_text("mine")  # a user's file in the output: never deleted
    with pytest.raises(BenchsmithError, match="added or changed"):
        miniimagenet_from_hf_parquet(files, tmp_path / "ravi")
    assert (out / "notes.txt").read_text() == "mine"
    (out / "notes.txt").unlink()
    (out / "train.csv").write_text("edited")  # one of its own files changed: refused too
    with pytest.raises(BenchsmithError, match="train.csv"):
        miniimagenet_from_hf_parquet(files, tmp_path / "ravi")
    (out / "train.csv").unlink()  # a file gone is nothing lost: replaced whole
    miniimagenet_from_hf_parquet(files, tmp_path / "ravi")
    assert (out / "train.csv").is_file()
    assert len(read_miniimagenet(out).splits["train"]) == 12
