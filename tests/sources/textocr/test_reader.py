"""TextOCR v0.1: the sample writer (checked against its own pixels) and the reader's checks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from benchsmith.cli import main
from benchsmith.core.errors import BenchsmithError, SourceError
from benchsmith.sources import SOURCES
from benchsmith.sources.textocr.reader import annotations_path, read_textocr
from benchsmith.sources.textocr.sample import write_sample_textocr

IMAGE_KEYS = {"id", "width", "height", "set", "file_name"}
ANN_KEYS = {"id", "image_id", "bbox", "points", "utf8_string", "area"}


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_textocr(tmp_path_factory.mktemp("textocr"))


@pytest.fixture
def copy(sample: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(sample, tmp_path / "TextOCR"))


def _document(root: Path, split: str) -> dict:
    return json.loads(annotations_path(root, split).read_text(encoding="utf-8"))


def _write(root: Path, split: str, document: dict) -> None:
    annotations_path(root, split).write_text(json.dumps(document), encoding="utf-8")


def _fill(points: list[float], box: list[float]) -> float:
    xs, ys = np.array(points[::2]), np.array(points[1::2])
    area = abs(np.dot(xs, np.roll(ys, -1)) - np.dot(ys, np.roll(xs, -1))) / 2
    return float(area / (box[2] * box[3]))


def test_sample_has_the_real_keys_layout_and_the_hard_cases(sample: Path) -> None:
    for split in ("train", "val"):
        document = _document(sample, split)
        assert set(document) == {"info", "imgs", "anns", "imgToAnns"}
        assert all(set(i) == IMAGE_KEYS and i["set"] == split for i in document["imgs"].values())
        assert all(set(a) == ANN_KEYS for a in document["anns"].values())
        for image_id, image in document["imgs"].items():
            assert image["file_name"] == f"train/{image_id}.jpg"  # the real folder name
            with Image.open(sample / "train_images" / f"{image_id}.jpg") as picture:
                assert picture.format == "JPEG" and picture.size == (
                    image["width"],
                    image["height"],
                )
        anns = list(document["anns"].values())
        assert any(a["utf8_string"] == "." for a in anns), "no illegible word"
        assert any(_fill(a["points"], a["bbox"]) < 0.9 for a in anns), "no rotated word"
        assert all(a["bbox"][2] * a["bbox"][3] == pytest.approx(a["area"]) for a in anns)


def test_every_box_holds_ink_and_the_rest_is_background(sample: Path) -> None:
    """The annotations are where the drawing is: each box has dark ink, and away from every
    box the image is its background colour (to JPEG's error)."""
    document = _document(sample, "train")
    for image_id in document["imgs"]:
        pixels = np.asarray(Image.open(sample / "train_images" / f"{image_id}.jpg"), dtype=int)
        outside = np.ones(pixels.shape[:2], dtype=bool)
        for ann_id in document["imgToAnns"][image_id]:
            x, y, w, h = (int(round(v)) for v in document["anns"][ann_id]["bbox"])
            crop = pixels[y : y + h, x : x + w]
            assert crop.min() < 110, f"{ann_id}: no ink in its box"
            outside[max(0, y - 3) : y + h + 3, max(0, x - 3) : x + w + 3] = False
        background = np.median(pixels[outside], axis=0)
        assert np.abs(pixels[outside] - background).max() < 40, image_id


def test_reader_returns_images_sorted_with_their_words(sample: Path) -> None:
    images = read_textocr(sample, "train")
    document = _document(sample, "train")
    assert [i.id for i in images] == sorted(document["imgs"])
    for image in images:
        assert [w.id for w in image.words] == sorted(document["imgToAnns"][image.id])
        assert image.path == sample / "train_images" / f"{image.id}.jpg"
        for word in image.words:
            ann = document["anns"][word.id]
            assert (list(word.bbox), word.text, word.image_id) == (
                ann["bbox"],
                ann["utf8_string"],
                image.id,
            )


def test_the_index_may_be_called_img2Anns_or_be_absent(copy: Path) -> None:
    expected = [(i.id, i.words) for i in read_textocr(copy, "val")]
    document = _document(copy, "val")
    document["img2Anns"] = document.pop("imgToAnns")
    _write(copy, "val", document)
    assert [(i.id, i.words) for i in read_textocr(copy, "val")] == expected
    del document["img2Anns"]
    _write(copy, "val", document)
    assert [(i.id, i.words) for i in read_textocr(copy, "val")] == expected


def test_images_at_their_file_name_are_found_too(copy: Path) -> None:
    (copy / "train_images").rename(copy / "train")
    assert all(i.path.parent == copy / "train" for i in read_textocr(copy, "val"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d, a, i: d["anns"][a].update(image_id="nowhere"), "names image 'nowhere'"),
        (lambda d, a, i: d["anns"][a].update(bbox=[1, 2, 3]), "bbox .* is not \\[x, y, w, h\\]"),
        (lambda d, a, i: d["anns"][a].update(points=[1, 2, 3]), "points is not a flat list"),
        (lambda d, a, i: d["anns"][a].pop("utf8_string"), "lacks key\\(s\\) \\['utf8_string'\\]"),
        (lambda d, a, i: d["imgToAnns"][i].pop(), "does not list the annotations"),
        (lambda d, a, i: d["imgs"][i].update(width=0), "width and height must be positive"),
        (lambda d, a, i: d["imgs"][i].update(file_name="../../etc/x.jpg"), "not a relative path"),
        (lambda d, a, i: d.pop("anns"), "`anns` is missing"),
    ],
)
def test_malformed_annotations_are_errors_naming_the_file_and_entry(copy, change, message):
    document = _document(copy, "train")
    image_id = sorted(document["imgs"])[2]
    change(document, document["imgToAnns"][image_id][0], image_id)
    _write(copy, "train", document)
    with pytest.raises(SourceError, match=message) as info:
        read_textocr(copy, "train")
    assert str(annotations_path(copy, "train")) in str(info.value)


def test_truncated_json_missing_file_and_missing_image_are_clear_errors(copy: Path) -> None:
    path = annotations_path(copy, "val")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(SourceError, match="not valid JSON") as info:
        read_textocr(copy, "val")
    assert "TextOCR_0.1_val.json" in str(info.value)
    path.unlink()
    with pytest.raises(SourceError, match="annotations file not found"):
        read_textocr(copy, "val")
    with pytest.raises(SourceError, match="found TextOCR/ inside it"):
        read_textocr(copy.parent, "train")
    victim = sorted((copy / "train_images").iterdir())[0]
    victim.unlink()
    with pytest.raises(SourceError, match=f"{victim.stem}.*does not exist") as info:
        read_textocr(copy, "train")
    assert "train_val_images.zip" in str(info.value)


def test_link_checks_then_links_and_check_counts(copy: Path, tmp_path: Path, capsys) -> None:
    source = SOURCES.get("textocr")
    linked = source.link(copy.parent, tmp_path / "out")  # the folder holding TextOCR/ works too
    assert linked.is_symlink() and linked.resolve() == copy.resolve()
    assert main(["source", "check", "textocr", str(tmp_path / "out")]) == 0
    counts = json.loads(capsys.readouterr().out)["splits"]
    assert counts["train"]["images"] == 12 and counts["val"]["images"] == 6
    assert counts["train"]["illegible_words"] >= 1
    sorted((copy / "train_images").iterdir())[0].unlink()
    with pytest.raises(SourceError, match="does not exist"):
        source.link(copy, tmp_path / "again")
    assert not (tmp_path / "again").exists()


def test_full_profile_without_a_copy_says_where_to_get_textocr(tmp_path: Path) -> None:
    source = SOURCES.get("textocr")
    with pytest.raises(BenchsmithError, match="not downloaded by benchsmith") as info:
        source.prepare(tmp_path, {"profile": "full", "sources": {"textocr": {"full": {}}}})
    assert "train_val_images.zip" in str(info.value) and "local_dir" in str(info.value)
