"""read_captions on hand-written captions files in the real COCO 2014 layout."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from pycocotools.coco import COCO

from benchsmith.core.errors import SourceError
from benchsmith.sources.coco.reader import (
    CAPTIONS_RELPATH,
    IMAGES_DIRNAME,
    clean_caption,
    default_images_dir,
    normalize_caption,
    read_captions,
)

LICENSES = [
    {"url": "http://creativecommons.org/licenses/by-nc-sa/2.0/", "id": 1, "name": "BY-NC-SA"},
    {"url": "http://creativecommons.org/licenses/by/2.0/", "id": 4, "name": "Attribution License"},
]


def image_entry(image_id: int, license_id: int = 1, width: int = 640, height: int = 480) -> dict:
    name = f"COCO_val2014_{image_id:012d}.jpg"
    return {
        "license": license_id,
        "file_name": name,
        "coco_url": f"http://images.cocodataset.org/val2014/{name}",
        "height": height,
        "width": width,
        "date_captured": "2013-11-14 11:18:45",
        "flickr_url": f"http://farm3.staticflickr.com/2000/{image_id}_x.jpg",
        "id": image_id,
    }


def ann(ann_id: int, image_id: int, caption: str) -> dict:
    return {"image_id": image_id, "id": ann_id, "caption": caption}


def captions_doc(images: list[dict], annotations: list[dict]) -> dict[str, Any]:
    return {
        "info": {
            "description": "This is stable 1.0 version of the 2014 MS COCO dataset.",
            "url": "http://mscoco.org",
            "version": "1.0",
            "year": 2014,
            "contributor": "Microsoft COCO group",
            "date_created": "2015-01-27 09:11:52.357475",
        },
        "images": images,
        "licenses": LICENSES,
        "type": "captions",
        "annotations": annotations,
    }


def write_doc(tmp_path: Path, doc: Any) -> Path:
    path = tmp_path / CAPTIONS_RELPATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


# images[] deliberately not sorted by id; annotations interleaved and ids not sorted
IMAGES = [image_entry(300, 4, 500, 375), image_entry(100), image_entry(200)]
ANNOTATIONS = [
    ann(905, 100, "A man riding a wave on top of a surfboard."),
    ann(17, 300, "A giraffe standing next to a tree  "),
    ann(402, 100, " A surfer\nrides a large wave."),
    ann(3, 300, "Tall giraffe eating leaves."),
    ann(77, 999, "Caption for an image that is not in images[]."),
    ann(6, 100, "Person surfing in the ocean."),
    ann(78, 998, "Another orphan caption."),
]


@pytest.fixture
def standard(tmp_path: Path) -> Path:
    return write_doc(tmp_path, captions_doc(IMAGES, ANNOTATIONS))


def test_images_kept_in_file_order_with_fields(standard: Path) -> None:
    source = read_captions(standard)
    assert [image.image_id for image in source.images] == [300, 100, 200]
    first = source.images[0]
    assert first.file_name == "COCO_val2014_000000000300.jpg"
    assert (first.width, first.height) == (500, 375)
    assert first.license == 4
    assert first.coco_url == IMAGES[0]["coco_url"]
    assert first.flickr_url == IMAGES[0]["flickr_url"]
    assert source.path == standard


def test_every_caption_kept_with_annotation_id_in_file_order(standard: Path) -> None:
    source = read_captions(standard)
    expected: dict[int, list[tuple[int, str]]] = {}
    for entry in ANNOTATIONS:
        if entry["image_id"] in (100, 200, 300):
            expected.setdefault(entry["image_id"], []).append((entry["id"], entry["caption"]))
    got = {
        image_id: [(c.annotation_id, c.caption) for c in caps]
        for image_id, caps in source.captions.items()
    }
    assert got == expected
    assert got[100] == [
        (905, "A man riding a wave on top of a surfboard."),
        (402, " A surfer\nrides a large wave."),  # raw text, whitespace untouched
        (6, "Person surfing in the ocean."),
    ]
    for image_id, caps in source.captions.items():
        assert all(c.image_id == image_id for c in caps)


def test_image_without_captions_counted_and_excluded(standard: Path) -> None:
    source = read_captions(standard)
    assert source.skipped["images_without_captions"] == 1
    assert [image.image_id for image in source.images_with_captions] == [300, 100]
    assert 200 in [image.image_id for image in source.images]
    assert 200 not in source.captions


def test_captions_for_unknown_images_counted(standard: Path) -> None:
    source = read_captions(standard)
    assert source.skipped["captions_for_unknown_images"] == 2
    assert 999 not in source.captions
    assert 998 not in source.captions
    kept = sum(len(caps) for caps in source.captions.values())
    assert kept == len(ANNOTATIONS) - 2


def test_clean_file_has_no_skips(tmp_path: Path) -> None:
    path = write_doc(tmp_path, captions_doc([image_entry(5)], [ann(1, 5, "A cat.")]))
    source = read_captions(path)
    assert sum(source.skipped.values()) == 0
    assert source.images_with_captions == source.images


def test_sha256_matches_hashlib(standard: Path) -> None:
    assert read_captions(standard).sha256 == hashlib.sha256(standard.read_bytes()).hexdigest()


def test_license_name(standard: Path) -> None:
    source = read_captions(standard)
    assert source.license_name(1) == "BY-NC-SA"
    assert source.license_name(4) == "Attribution License"
    assert source.license_name(source.images[0].license) == "Attribution License"
    assert source.license_name(None) is None
    unknown = source.license_name(42)
    assert unknown is not None and "42" in unknown


def test_missing_license_and_size_fields_tolerated(tmp_path: Path) -> None:
    entry = {"id": 8, "file_name": "COCO_val2014_000000000008.jpg"}
    path = write_doc(tmp_path, captions_doc([entry], [ann(1, 8, "x")]))
    image = read_captions(path).images[0]
    assert image.license is None
    assert (image.width, image.height) == (0, 0)
    assert image.coco_url is None


def test_nothing_printed_to_stdout(standard: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # pycocotools itself does print while indexing: the reader must silence it
    coco = COCO()
    coco.dataset = json.loads(standard.read_text(encoding="utf-8"))
    coco.createIndex()
    assert capsys.readouterr().out != ""
    read_captions(standard)
    assert capsys.readouterr().out == ""


def test_malformed_json_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "captions_val2014.json"
    path.write_text('{"images": [], "annotations": [', encoding="utf-8")
    with pytest.raises(SourceError) as info:
        read_captions(path)
    assert str(path) in str(info.value)


def test_non_utf8_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "captions_val2014.json"
    path.write_bytes(b'{"images": [], "annotations": [], "x": "\xff\xfe"}')
    with pytest.raises(SourceError) as info:
        read_captions(path)
    assert str(path) in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    path = tmp_path / "annotations" / "captions_val2014.json"
    with pytest.raises(SourceError) as info:
        read_captions(path)
    assert str(path) in str(info.value)


def test_directory_instead_of_file(tmp_path: Path) -> None:
    with pytest.raises(SourceError):
        read_captions(tmp_path)


@pytest.mark.parametrize(
    "doc",
    [
        [image_entry(1)],
        {"images": [image_entry(1)]},
        {"annotations": [ann(1, 1, "x")]},
        {"images": {"1": image_entry(1)}, "annotations": []},
        {"images": [image_entry(1)], "annotations": "none"},
        {"images": [image_entry(1)], "annotations": [{"id": 1, "image_id": 1}]},
        {"images": [image_entry(1)], "annotations": ["A cat."]},
        {"images": [{"id": 1}], "annotations": []},
        "just a string",
    ],
    ids=[
        "list",
        "no-annotations",
        "no-images",
        "images-dict",
        "annotations-string",
        "annotation-without-caption",
        "annotation-not-object",
        "image-without-file-name",
        "string",
    ],
)
def test_wrong_shape_raises_source_error(tmp_path: Path, doc: Any) -> None:
    path = write_doc(tmp_path, doc)
    with pytest.raises(SourceError) as info:
        read_captions(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize(
    "bad_entry",
    [
        pytest.param({"file_name": "a.jpg", "width": 1}, id="no-id"),
        pytest.param("COCO_val2014_000000000001.jpg", id="not-object"),
        pytest.param({"id": "one", "file_name": "a.jpg"}, id="id-not-integer"),
    ],
)
def test_bad_image_entry_raises_source_error(tmp_path: Path, bad_entry: Any) -> None:
    path = write_doc(tmp_path, captions_doc([image_entry(1), bad_entry], [ann(1, 1, "x")]))
    with pytest.raises(SourceError) as info:
        read_captions(path)
    assert str(path) in str(info.value)


def test_duplicate_image_id(tmp_path: Path) -> None:
    images = [image_entry(7), image_entry(8), image_entry(7)]
    path = write_doc(tmp_path, captions_doc(images, [ann(1, 7, "x")]))
    with pytest.raises(SourceError) as info:
        read_captions(path)
    assert "7" in str(info.value)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("bad_image_id", [None, "abc"])
def test_non_integer_annotation_image_id_raises_source_error(
    tmp_path: Path, bad_image_id: object
) -> None:
    annotations = [ann(1, 1, "A cat."), ann(2, bad_image_id, "A dog.")]  # type: ignore[arg-type]
    path = write_doc(tmp_path, captions_doc([image_entry(1)], annotations))
    with pytest.raises(SourceError) as info:
        read_captions(path)
    assert str(path) in str(info.value)


def test_normalize_caption() -> None:
    assert normalize_caption(" A Dog,\n  on the\tBEACH.  ") == "a dog, on the beach"
    assert normalize_caption("A plate of food on a table.") == normalize_caption(
        "a plate of food  on a table "
    )
    assert normalize_caption("Wait...") == "wait"
    assert normalize_caption("") == ""
    assert normalize_caption("A cat") != normalize_caption("A cats")


def test_clean_caption() -> None:
    assert clean_caption(" A Dog,\n  on the\tBEACH.  ") == "A Dog, on the BEACH."
    assert clean_caption("A surfer\r\nrides a wave.\n") == "A surfer rides a wave."
    assert clean_caption("unchanged caption.") == "unchanged caption."


def test_default_images_dir_is_val2014_next_to_annotations(tmp_path: Path) -> None:
    path = write_doc(tmp_path, captions_doc([image_entry(42)], [ann(1, 42, "x")]))
    assert read_captions(path).images[0].file_name == "COCO_val2014_000000000042.jpg"
    assert default_images_dir(path) == (tmp_path / IMAGES_DIRNAME).resolve()
