"""The miniature COCO: real layout, real quirks, scenes its captions describe, planted
duplicates, deterministic bytes."""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from benchsmith.core.errors import BenchsmithError
from benchsmith.core.outputs import MARKER
from benchsmith.images.hashes import hash_image
from benchsmith.sources.coco.reader import (
    CAPTIONS_RELPATH,
    IMAGES_DIRNAME,
    CocoCaptions,
    normalize_caption,
    read_captions,
)
from benchsmith.sources.coco.sample import (
    PLANTED_DUPLICATES,
    sample_image_specs,
    write_sample_coco,
)
from benchsmith.sources.coco.sample_scenes import COLOURS, SKY_FRACTION

N_IMAGES = 660
FILE_NAME = re.compile(r"COCO_val2014_(\d{12})\.jpg")
IMAGE_KEYS = {"id", "file_name", "width", "height", "license", "coco_url", "flickr_url"}
IMAGE_KEYS |= {"date_captured"}


@pytest.fixture(scope="module")
def sample_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("coco") / "sample"
    assert write_sample_coco(out, n_images=N_IMAGES) == out
    return out


@pytest.fixture(scope="module")
def source(sample_dir: Path) -> CocoCaptions:
    return read_captions(sample_dir / CAPTIONS_RELPATH)


@pytest.fixture(scope="module")
def raw(sample_dir: Path) -> dict:
    return json.loads((sample_dir / CAPTIONS_RELPATH).read_text(encoding="utf-8"))


def file_hashes(root: Path) -> dict[str, str]:
    return {
        path.relative_to(root).as_posix(): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def test_layout(sample_dir: Path) -> None:
    assert sorted(p.name for p in sample_dir.iterdir()) == [MARKER, "annotations", IMAGES_DIRNAME]
    assert (sample_dir / "annotations" / "captions_val2014.json").is_file()
    assert (sample_dir / "val2014" / ".DS_Store").is_file()
    assert not [p for p in sample_dir.parent.iterdir() if ".tmp-" in p.name]


def test_json_has_real_coco_keys(raw: dict) -> None:
    assert {"info", "licenses", "images", "annotations"} <= raw.keys()
    assert all(set(entry) == IMAGE_KEYS for entry in raw["images"])
    assert all(set(entry) == {"id", "image_id", "caption"} for entry in raw["annotations"])
    assert all({"id", "name", "url"} <= set(entry) for entry in raw["licenses"])
    license_ids = {entry["id"] for entry in raw["licenses"]}
    assert all(entry["license"] in license_ids for entry in raw["images"])
    ann_ids = [entry["id"] for entry in raw["annotations"]]
    assert len(set(ann_ids)) == len(ann_ids)


def test_read_back_counts(source: CocoCaptions) -> None:
    assert len(source.images) == N_IMAGES
    assert len(source.images_with_captions) == N_IMAGES
    assert sum(source.skipped.values()) == 0


def test_caption_counts_per_image(source: CocoCaptions) -> None:
    # 2-5 generated captions each; the first two images in images[] additionally get the
    # shared caption, appended after all the others
    first_two = {image.image_id for image in source.images[:2]}
    counts = {image_id: len(caps) for image_id, caps in source.captions.items()}
    for image_id, count in counts.items():
        extra = 1 if image_id in first_two else 0
        assert 2 + extra <= count <= 5 + extra, (image_id, count)
    assert len(set(counts.values())) >= 3  # the counts really vary


def test_shared_caption_is_last_listed_for_both_images(source: CocoCaptions) -> None:
    last = [normalize_caption(source.captions[img.image_id][-1].caption) for img in source.images]
    assert last[0] == last[1]
    assert last.count(last[0]) == 2


def test_captions_are_shared_only_where_the_picture_is(source: CocoCaptions) -> None:
    """One generic caption is shared verbatim by the first two images; otherwise only a
    planted duplicate shares captions, with the picture it copies (the same scene)."""
    owners: dict[str, set[int]] = defaultdict(set)
    for image_id, caps in source.captions.items():
        for caption in caps:
            owners[normalize_caption(caption.caption)].add(image_id)
    shared = {frozenset(ids) for ids in owners.values() if len(ids) > 1}
    first_two = frozenset(image.image_id for image in source.images[:2])
    copies = {frozenset((s.image_id, s.copy_of)) for s in sample_image_specs(N_IMAGES) if s.copy_of}
    assert first_two in shared
    assert shared - {first_two} <= copies
    assert len(copies) == len(PLANTED_DUPLICATES)


def test_captions_describe_what_is_drawn(sample_dir: Path, source: CocoCaptions) -> None:
    """The colour a caption gives each filled shape is the colour at the shape's centre, and
    the ground colour it names is the ground's (both within shading and JPEG error)."""
    checked = 0
    for spec in sample_image_specs(N_IMAGES)[:120]:
        if spec.mode == "L":
            continue
        captions = " ".join(c.caption for c in source.captions[spec.image_id])
        scene = spec.scene
        assert f"{scene.ground} ground" in captions
        with Image.open(sample_dir / IMAGES_DIRNAME / spec.file_name) as pil:
            pixels = np.asarray(pil.convert("RGB"), dtype=np.float64)
        height, width = pixels.shape[:2]
        for obj in scene.objects:
            assert f"{obj.colour} {obj.shape}" in captions
            if obj.shape in ("ring", "cross"):
                continue  # no filled centre to sample
            x = round({"left": 0.28, "middle": 0.5, "right": 0.72}[obj.side] * width)
            half = obj.scale * height
            y = min(max(SKY_FRACTION * height + half + 1, (SKY_FRACTION + obj.dy) * height),
                    height - half - 1)  # fmt: skip
            colour = pixels[round(y), x]
            assert np.abs(colour - COLOURS[obj.colour]).max() <= 40, (spec, obj, colour)
            checked += 1
    assert checked >= 60


def test_planted_duplicates_are_what_the_image_hashes_find(sample_dir: Path) -> None:
    """Exactly the planted pairs are duplicates: the exact copy has identical pixels, the
    near copies other bytes within pHash distance 4; every other pair is far apart."""
    specs = sample_image_specs(N_IMAGES)
    hashes = [hash_image((sample_dir / IMAGES_DIRNAME / s.file_name).read_bytes()) for s in specs]
    index = {s.image_id: k for k, s in enumerate(specs)}
    planted = {}
    for spec in specs:
        if spec.copy_of:
            a, b = hashes[index[spec.image_id]], hashes[index[spec.copy_of]]
            assert (a.pixel_sha256 == b.pixel_sha256) == (spec.copy_kind == "exact")
            planted[frozenset((index[spec.image_id], index[spec.copy_of]))] = spec.copy_kind
    phash = np.array([h.phash for h in hashes], dtype=np.uint64)
    distance = np.zeros((len(specs), len(specs)), dtype=int)
    for bit in range(64):
        distance += ((phash[:, None] ^ phash[None, :]) >> np.uint64(bit) & np.uint64(1)).astype(int)
    close = {
        frozenset((i, j))
        for i in range(len(specs))
        for j in range(i + 1, len(specs))
        if distance[i, j] <= 4
    }
    assert close == set(planted)
    assert sorted(planted.values()) == sorted(kind for _, _, kind in PLANTED_DUPLICATES)


def test_captions_have_stray_whitespace_and_newlines(source: CocoCaptions) -> None:
    texts = [c.caption for caps in source.captions.values() for c in caps]
    assert any(text != text.rstrip() and not text.endswith("\n") for text in texts)
    assert any("\n" in text for text in texts)
    assert any(text != text.lstrip() for text in texts)


def test_images_not_sorted_and_annotations_interleaved(source: CocoCaptions, raw: dict) -> None:
    ids = [image.image_id for image in source.images]
    assert ids != sorted(ids)
    ann_image_ids = [entry["image_id"] for entry in raw["annotations"]]
    runs = sum(1 for a, b in zip(ann_image_ids, ann_image_ids[1:], strict=False) if a != b) + 1
    assert runs > 2 * N_IMAGES  # far more runs than one block of captions per image


def test_file_names_match_images(sample_dir: Path, source: CocoCaptions) -> None:
    jpgs = {p.name for p in (sample_dir / IMAGES_DIRNAME).iterdir() if p.suffix == ".jpg"}
    assert jpgs == {image.file_name for image in source.images}
    for image in source.images:
        match = FILE_NAME.fullmatch(image.file_name)
        assert match is not None, image.file_name
        assert int(match.group(1)) == image.image_id


def test_jpegs_match_json_sizes_and_specs(sample_dir: Path, source: CocoCaptions) -> None:
    specs = sample_image_specs(N_IMAGES)
    assert [s.image_id for s in specs] == [image.image_id for image in source.images]
    modes, sizes = set(), set()
    for spec, image in zip(specs, source.images, strict=True):
        with Image.open(sample_dir / IMAGES_DIRNAME / image.file_name) as pil:
            assert pil.format == "JPEG"
            assert pil.size == (image.width, image.height) == spec.size
            assert pil.mode == spec.mode
            modes.add(pil.mode)
            sizes.add(pil.size)
            pixels = np.asarray(pil.convert("RGB"), dtype=np.float64)
        sky = pixels[: pixels.shape[0] // 4].reshape(-1, 3).mean(axis=0)  # always plain sky
        assert np.abs(sky - np.array(spec.color)).max() <= 3, (spec, sky)
        if spec.mode == "L":
            assert len(set(spec.color)) == 1
    assert "L" in modes and "RGB" in modes
    assert len(sizes) >= 3


def test_spec_colours_pairwise_distinct() -> None:
    """Sky colours tell images apart (a planted duplicate keeps its original's)."""
    specs = [s for s in sample_image_specs(N_IMAGES) if s.copy_of is None]
    colours = np.array([s.color for s in specs], dtype=np.int64)
    distance = np.abs(colours[:, None, :] - colours[None, :, :]).max(axis=2)
    np.fill_diagonal(distance, 255)
    assert distance.min() >= 25
    assert colours.min() >= 0 and colours.max() <= 255


def test_write_is_deterministic(tmp_path: Path, sample_dir: Path) -> None:
    again = write_sample_coco(tmp_path / "again", n_images=N_IMAGES)
    first, second = file_hashes(sample_dir), file_hashes(again)
    assert len(first) == N_IMAGES + 3  # images + .DS_Store + captions file + marker
    assert first == second


def test_different_seed_gives_different_sample(tmp_path: Path) -> None:
    a = read_captions(write_sample_coco(tmp_path / "a", n_images=30, seed=0) / CAPTIONS_RELPATH)
    b = read_captions(write_sample_coco(tmp_path / "b", n_images=30, seed=1) / CAPTIONS_RELPATH)
    ids_a = {image.image_id for image in a.images}
    ids_b = {image.image_id for image in b.images}
    assert len(ids_a) == len(ids_b) == 30
    assert ids_a != ids_b


@pytest.mark.parametrize("n_images", [1, 2])
def test_smallest_samples(tmp_path: Path, n_images: int) -> None:
    out = write_sample_coco(tmp_path / "s", n_images=n_images)
    source = read_captions(out / CAPTIONS_RELPATH)
    assert len(source.images_with_captions) == n_images


@pytest.mark.parametrize("n_images", [0, -5, 991, 5000])
def test_n_images_out_of_range(tmp_path: Path, n_images: int) -> None:
    with pytest.raises(BenchsmithError) as info:
        write_sample_coco(tmp_path / "s", n_images=n_images)
    assert str(n_images) in str(info.value)
    assert not (tmp_path / "s").exists()


def test_largest_allowed_sample(tmp_path: Path) -> None:
    out = write_sample_coco(tmp_path / "s", n_images=990)
    assert len(read_captions(out / CAPTIONS_RELPATH).images) == 990
    colours = np.array(
        [s.color for s in sample_image_specs(990) if s.copy_of is None], dtype=np.int64
    )
    distance = np.abs(colours[:, None, :] - colours[None, :, :]).max(axis=2)
    np.fill_diagonal(distance, 255)
    assert distance.min() >= 25


def test_existing_folder_replaced_whole(tmp_path: Path) -> None:
    out = tmp_path / "coco"
    write_sample_coco(out, n_images=40, seed=3)
    (out / "notes.txt").write_text("mine")  # a user's file in the output: never deleted
    with pytest.raises(BenchsmithError, match="added or changed") as refused:
        write_sample_coco(out, n_images=20, seed=4)
    assert "notes.txt" in str(refused.value) and (out / "notes.txt").read_text() == "mine"
    (out / "notes.txt").unlink()
    write_sample_coco(out, n_images=20, seed=4)  # the 40-image output, replaced whole
    jpgs = sorted(p.name for p in (out / IMAGES_DIRNAME).glob("*.jpg"))
    source = read_captions(out / CAPTIONS_RELPATH)
    assert jpgs == sorted(image.file_name for image in source.images)
    assert len(jpgs) == 20
    assert sorted(p.name for p in tmp_path.iterdir()) == ["coco"]


def test_failed_write_keeps_previous_sample(tmp_path: Path) -> None:
    out = tmp_path / "coco"
    write_sample_coco(out, n_images=10)
    before = file_hashes(out)
    with pytest.raises(BenchsmithError):
        write_sample_coco(out, n_images=0)
    assert file_hashes(out) == before
