"""The generic HF-parquet dataset view: file discovery, column roles, images, row digests, joins."""

from __future__ import annotations

import shutil
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest
from curate_fixtures import png_bytes, texture

from benchsmith.builders.mmneedle.family import MMNEEDLE
from benchsmith.cli import main
from benchsmith.core.errors import SourceError
from benchsmith.core.hashing import sha256_bytes
from benchsmith.hf.dataset_view import (
    ColumnMap,
    DatasetView,
    row_digest,
)
from benchsmith.hf.reader import split_files

TEXT_FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "question": datasets.Value("string"),
        "answer": datasets.Value("string"),
    }
)


def text_rows(prefix: str, n: int) -> list[dict]:
    return [
        {"id": f"{prefix}{i}", "question": f"question {prefix}{i}?", "answer": str(i)}
        for i in range(n)
    ]


def write_parquet(
    path: Path, rows: list[dict], features: datasets.Features = TEXT_FEATURES
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(rows, features=features).to_parquet(str(path))
    return path


def write_readme(root: Path, front_matter: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text(f"---\n{front_matter}---\n\n# card\n", encoding="utf-8")


def ids_of(root: Path, config: str, split: str, **kwargs) -> list[str]:
    return [s.sample_id for s in DatasetView(root, config, split, **kwargs).iter_samples()]


# --- finding the parquet files -------------------------------------------------------------


def test_readme_configs_string_and_list_forms(tmp_path):
    root = tmp_path / "hub"
    single = write_parquet(root / "one" / "all.parquet", text_rows("s", 2))
    part_a = write_parquet(root / "many" / "part-b.parquet", text_rows("b", 1))
    part_b = write_parquet(root / "many" / "part-a.parquet", text_rows("a", 1))
    test = write_parquet(root / "x" / "holdout.parquet", text_rows("t", 3))
    val0 = write_parquet(root / "x" / "val-0.parquet", text_rows("v", 1))
    val1 = write_parquet(root / "y" / "val-1.parquet", text_rows("w", 1))
    # a decoy in our own layout: the README wins, so it must be ignored
    write_parquet(root / "data" / "splits" / "test-00000.parquet", text_rows("decoy", 5))
    write_readme(
        root,
        "configs:\n"
        "- config_name: single\n  data_files: one/*.parquet\n"
        "- config_name: listed\n  data_files:\n  - many/part-b.parquet\n  - many/part-a.parquet\n"
        "- config_name: splits\n  data_files:\n"
        "  - split: test\n    path: x/holdout.parquet\n"
        "  - split: validation\n    path:\n    - x/val-*.parquet\n    - y/val-*.parquet\n",
    )
    # a string, or a list of strings, is the train split (the Hub's rule)
    assert split_files(root, "single", "train") == [single]
    assert split_files(root, "listed", "train") == sorted([part_a, part_b])
    assert ids_of(root, "listed", "train") == ["a0", "b0"]  # files sorted by name
    with pytest.raises(SourceError, match="'single' has no split 'test'; its splits: train"):
        split_files(root, "single", "test")
    # a list of {split, path}, path a string or a list
    assert split_files(root, "splits", "test") == [test]
    assert split_files(root, "splits", "validation") == [val0, val1]
    assert ids_of(root, "splits", "test") == ["t0", "t1", "t2"]
    with pytest.raises(SourceError, match="split 'train'"):
        split_files(root, "splits", "train")


def test_fallback_layout_and_default_config(tmp_path):
    root = tmp_path / "ours"
    shard1 = write_parquet(root / "data" / "vqa" / "test-00001-of-00002.parquet", text_rows("b", 2))
    shard0 = write_parquet(root / "data" / "vqa" / "test-00000-of-00002.parquet", text_rows("a", 2))
    write_parquet(root / "data" / "vqa" / "support-00000-of-00001.parquet", text_rows("s", 1))
    assert split_files(root, "vqa", "test") == [shard0, shard1]
    assert ids_of(root, "vqa", "test") == ["a0", "a1", "b0", "b1"]
    assert len(DatasetView(root, "vqa", "test")) == 4
    assert ids_of(root, "vqa", "support") == ["s0"]

    flat = tmp_path / "flat"  # the Hub's layout of a dataset with a single (default) config
    write_parquet(flat / "data" / "test-00000-of-00001.parquet", text_rows("d", 3))
    write_parquet(flat / "data" / "train-00000-of-00001.parquet", text_rows("x", 1))
    assert ids_of(flat, "default", "test") == ["d0", "d1", "d2"]
    assert ids_of(flat, "default", "train") == ["x0"]


def test_missing_config_error_lists_the_available_configs(tmp_path):
    root = tmp_path / "ours"
    write_parquet(root / "data" / "vqa" / "test-00000.parquet", text_rows("a", 1))
    write_parquet(root / "data" / "charts" / "test-00000.parquet", text_rows("c", 1))
    with pytest.raises(SourceError) as info:
        DatasetView(root, "nope", "test")
    message = str(info.value)
    assert "'nope'" in message and "charts, vqa" in message and str(root) in message

    hub = tmp_path / "hub"  # config names that exist only in the README's configs block
    write_parquet(hub / "files" / "alpha.parquet", text_rows("a", 1))
    write_readme(hub, "configs:\n- config_name: alpha\n  data_files: files/alpha.parquet\n")
    with pytest.raises(SourceError, match="alpha"):
        split_files(hub, "beta", "train")

    flat = tmp_path / "flat"
    write_parquet(flat / "data" / "test-00000.parquet", text_rows("d", 1))
    with pytest.raises(SourceError, match="configs: default"):
        split_files(flat, "vqa", "test")
    # a config that exists with a split that does not: the error lists its splits
    write_parquet(flat / "data" / "vqa" / "support-00000.parquet", text_rows("s", 1))
    with pytest.raises(SourceError, match="config 'vqa' has no split 'test'; its splits: support"):
        split_files(flat, "vqa", "test")
    with pytest.raises(SourceError, match="config 'alpha' has no split 'test'; its splits: train"):
        split_files(hub, "alpha", "test")

    with pytest.raises(SourceError, match="dataset folder not found"):
        split_files(tmp_path / "absent", "vqa", "test")


# --- column roles --------------------------------------------------------------------------


def test_columns_are_guessed_from_common_names(tmp_path):
    features = datasets.Features(
        {
            "uid": datasets.Value("int64"),
            "prompt": datasets.Value("string"),
            "label": datasets.Value("string"),
            "options": datasets.List(datasets.Value("string")),
            "category": datasets.Value("string"),
            "image": datasets.Image(),
        }
    )
    rows = [
        {
            "uid": 7,
            "prompt": "Which colour?",
            "label": "B",
            "options": ["red", "blue"],
            "category": "colours",
            "image": {"bytes": png_bytes(texture(1)), "path": None},
        }
    ]
    root = tmp_path / "guess"
    write_parquet(root / "data" / "c" / "test-0.parquet", rows, features)
    view = DatasetView(root, "c", "test")
    assert (view.columns.id, view.columns.question, view.columns.answer) == (
        "uid",
        "prompt",
        "label",
    )
    assert (view.columns.choices, view.columns.subtask, view.columns.image) == (
        "options",
        "category",
        "image",
    )
    [sample] = view.iter_samples()
    assert (sample.sample_id, sample.question, sample.answer) == ("7", "Which colour?", "B")
    assert sample.choices == ["red", "blue"] and sample.subtask == "colours"
    assert sample.images == [png_bytes(texture(1))]


def test_explicit_columns_override_and_bad_names_are_errors(tmp_path):
    root = tmp_path / "ds"
    rows = [{"id": "a", "question": "q?", "answer": "x"}]
    write_parquet(root / "data" / "c" / "test-0.parquet", rows)
    view = DatasetView(root, "c", "test", ColumnMap(id="answer", question="id"))
    [sample] = view.iter_samples()
    assert (sample.sample_id, sample.question) == ("x", "a")
    with pytest.raises(SourceError) as info:
        DatasetView(root, "c", "test", ColumnMap(question="body"))
    message = str(info.value)
    assert "--question-column 'body'" in message and "id, question, answer" in message
    with pytest.raises(SourceError, match="--image-column 'pic'"):
        DatasetView(root, "c", "test", ColumnMap(image="pic"))


def test_missing_id_or_question_column_is_an_error(tmp_path):
    no_id = tmp_path / "no_id"
    write_parquet(
        no_id / "data" / "c" / "test-0.parquet",
        [{"key": "a", "question": "q?"}],
        datasets.Features({"key": datasets.Value("string"), "question": datasets.Value("string")}),
    )
    with pytest.raises(SourceError) as info:
        DatasetView(no_id, "c", "test")
    assert "which column is the id" in str(info.value) and "key, question" in str(info.value)
    assert "--id-column" in str(info.value)
    assert DatasetView(no_id, "c", "test", ColumnMap(id="key")).sample_ids() == ["a"]

    no_question = tmp_path / "no_question"
    write_parquet(
        no_question / "data" / "c" / "test-0.parquet",
        [{"id": "a", "body": "q?"}],
        datasets.Features({"id": datasets.Value("string"), "body": datasets.Value("string")}),
    )
    with pytest.raises(SourceError, match="which column is the question; columns: id, body"):
        DatasetView(no_question, "c", "test")


# --- images ----------------------------------------------------------------------------------

LIST_IMAGE_FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "question": datasets.Value("string"),
        "images": datasets.List(datasets.Image()),
    }
)


def test_images_as_bytes_relative_paths_and_lists(tmp_path):
    root = tmp_path / "imgs"
    (root / "pictures").mkdir(parents=True)
    on_disk = png_bytes(texture(11))
    (root / "pictures" / "p.png").write_bytes(on_disk)
    inline = [png_bytes(texture(12)), png_bytes(texture(13))]
    rows = [
        {"id": "inline", "question": "q?", "images": [{"bytes": b, "path": None} for b in inline]},
        {"id": "path", "question": "q?", "images": [{"bytes": None, "path": "pictures/p.png"}]},
        {"id": "none", "question": "q?", "images": []},
    ]
    # HF's schema (Image structs, features in the metadata), written with pyarrow so that the
    # path stays relative: `Dataset.to_parquet` would embed the file's bytes
    schema = datasets.Dataset.from_list(rows[:1], features=LIST_IMAGE_FEATURES).data.table.schema
    path = root / "data" / "c" / "test-0.parquet"
    path.parent.mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    samples = {s.sample_id: s for s in DatasetView(root, "c", "test").iter_samples()}
    assert samples["inline"].images == inline  # List(Image), in order
    assert samples["path"].images == [on_disk]  # resolved against the dataset folder
    assert samples["none"].images == []
    # the logged row keeps the image digests, not the payloads
    assert samples["inline"].row["images"][0]["bytes"] == {"sha256": sha256_bytes(inline[0])}

    (root / "pictures" / "p.png").unlink()
    with pytest.raises(SourceError) as info:
        list(DatasetView(root, "c", "test").iter_samples())
    assert "missing" in str(info.value) and str(root / "pictures" / "p.png") in str(info.value)


def test_binary_image_column_and_text_only_reading(tmp_path):
    root = tmp_path / "binary"
    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "question": datasets.Value("string"),
            "image": datasets.Value("binary"),
        }
    )
    picture = png_bytes(texture(21))
    write_parquet(
        root / "data" / "c" / "test-0.parquet",
        [{"id": "a", "question": "q?", "image": picture}],
        features,
    )
    view = DatasetView(root, "c", "test")
    [with_images] = view.iter_samples()
    assert with_images.images == [picture]
    [text_only] = view.iter_samples(with_images=False)
    assert text_only.images == [] and "image" not in text_only.row  # the column is not read


# --- row digests -------------------------------------------------------------------------------


def mcq_row(image: bytes, answer: str = "A") -> dict:
    return {"id": "q1", "question": "q?", "answer": answer, "images": [{"bytes": image}]}


def test_row_digest_tracks_values_and_image_bytes():
    picture = png_bytes(texture(31))
    base = row_digest(mcq_row(picture))
    assert row_digest(mcq_row(picture)) == base
    assert row_digest(mcq_row(picture, answer="B")) != base
    assert row_digest(mcq_row(png_bytes(texture(32)))) != base
    assert row_digest(mcq_row(picture + b"\x00")) != base  # one extra byte is another image
    assert row_digest(dict(reversed(list(mcq_row(picture).items())))) == base  # key order


def test_row_digest_survives_a_parquet_rewrite_with_other_compression(tmp_path):
    root = tmp_path / "ds"
    path = root / "data" / "c" / "test-0.parquet"
    rows = [
        {"id": f"q{i}", "question": f"q{i}?", "images": [{"bytes": png_bytes(texture(40 + i))}]}
        for i in range(3)
    ]
    write_parquet(path, rows, LIST_IMAGE_FEATURES)

    def digests() -> dict[str, str]:
        return {s.sample_id: s.row_sha256 for s in DatasetView(root, "c", "test").iter_samples()}

    before = digests()
    assert len(set(before.values())) == 3
    table = pq.read_table(path)
    raw = path.read_bytes()
    pq.write_table(table, path, compression="gzip", row_group_size=1)
    assert path.read_bytes() != raw
    assert digests() == before
    # ... but one changed image byte changes that row's digest, and only that one
    rows[1]["images"] = [{"bytes": png_bytes(texture(40 + 1), note="other")}]
    write_parquet(path, rows, LIST_IMAGE_FEATURES)
    after = digests()
    assert after["q1"] != before["q1"] and after["q0"] == before["q0"]


# --- MMNeedle: images joined from the haystack configs ----------------------------------------


def haystack_images(published: Path, grid: int) -> dict[str, tuple[bytes, str]]:
    files = split_files(published, f"haystacks_n{grid}", "test")
    table = pads.dataset([str(p) for p in files], format="parquet").to_table(
        columns=["stitched_id", "image", "sha256"]
    )
    return {r["stitched_id"]: (r["image"]["bytes"], r["sha256"]) for r in table.to_pylist()}


def test_mmneedle_images_are_the_haystack_jpegs_in_order(built):
    published = built["published"]
    columns = MMNEEDLE.columns({})
    assert columns.image_join is not None
    haystacks = haystack_images(published, 2)
    view = DatasetView(published, "m10_n2_k1", "test", columns)
    samples = list(view.iter_samples())
    assert len(samples) == len(view) == 10
    for sample in samples:
        stitched_ids = sample.row["haystack"]
        assert len(sample.images) == len(stitched_ids) == 10
        assert [sha256_bytes(b) for b in sample.images] == [haystacks[s][1] for s in stitched_ids]
        assert sample.images[0][:2] == b"\xff\xd8"  # JPEG
        assert sample.question.startswith("Given 10 images") and sample.answer
    # another grid joins another config
    [first] = list(DatasetView(published, "m1_n4_k1", "test", columns).iter_samples())[:1]
    assert [sha256_bytes(b) for b in first.images] == [
        haystack_images(published, 4)[s][1] for s in first.row["haystack"]
    ]


def test_mmneedle_text_only_reading_opens_no_haystack(built, tmp_path):
    published = tmp_path / "published"
    shutil.copytree(built["published"], published)
    shutil.rmtree(published / "data" / "haystacks_n2")
    view = DatasetView(published, "m10_n2_k1", "test", MMNEEDLE.columns({}))
    samples = list(view.iter_samples(with_images=False))
    assert len(samples) == 10 and all(s.images == [] for s in samples)
    with pytest.raises(SourceError, match="haystacks_n2"):
        next(view.iter_samples(with_images=True))


def test_duplicate_sample_ids_stop_curation(tmp_path, capsys):
    root = tmp_path / "dups"
    rows = [*text_rows("q", 3), {"id": "q1", "question": "again?", "answer": "1"}]
    write_parquet(root / "data" / "c" / "test-0.parquet", rows)
    (tmp_path / "none.yaml").write_text("{}\n", encoding="utf-8")
    out = tmp_path / "out"
    args = ["curate", str(root), "--config", "c", "--out", str(out), "--no-blind"]
    assert main([*args, "--params", str(tmp_path / "none.yaml")]) == 2
    err = capsys.readouterr().err
    assert "'q1' appears twice" in err and "--id-column" in err and str(root) in err
    assert not out.exists()
