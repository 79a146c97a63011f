"""CLEVR v1.0 scenes: the sample writer (checked against its own pixels) and the reader."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from png_inspect import png_chunk_types

from benchsmith.core.errors import SourceError
from benchsmith.core.outputs import MARKER
from benchsmith.sources.clevr.reader import (
    CLEVR_VOCAB,
    read_clevr_scenes,
    scenes_path,
)
from benchsmith.sources.clevr.sample import BACKGROUND, COLOR_RGB, write_sample_clevr

N_TRAIN, N_VAL = 24, 12
OBJECT_KEYS = {"color", "size", "shape", "material", "3d_coords", "pixel_coords", "rotation"}
SCENE_KEYS = {
    "split",
    "image_index",
    "image_filename",
    "objects",
    "relationships",
    "directions",
}


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_clevr(tmp_path_factory.mktemp("clevr"))


@pytest.fixture
def copy(sample: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(sample, tmp_path / "CLEVR_v1.0"))


def raw_scenes(root: Path, split: str) -> dict:
    return json.loads(scenes_path(root, split).read_text(encoding="utf-8"))


def write_raw(root: Path, split: str, document: dict) -> None:
    scenes_path(root, split).write_text(json.dumps(document), encoding="utf-8")


def components(image: Image.Image) -> list[dict]:
    """4-connected regions of non-background pixels: box, colour, whether the centre is inked."""
    pixels = np.asarray(image.convert("RGB"))
    ink = np.any(pixels != np.asarray(BACKGROUND[:3]), axis=2)
    seen = np.zeros_like(ink)
    found = []
    for y0, x0 in zip(*np.nonzero(ink), strict=True):
        if seen[y0, x0]:
            continue
        stack, members = [(y0, x0)], []
        seen[y0, x0] = True
        while stack:
            y, x = stack.pop()
            members.append((y, x))
            for ny, nx in ((y + 1, x), (y - 1, x), (y, x + 1), (y, x - 1)):
                inside = 0 <= ny < ink.shape[0] and 0 <= nx < ink.shape[1]
                if inside and ink[ny, nx] and not seen[ny, nx]:
                    seen[ny, nx] = True
                    stack.append((ny, nx))
        ys, xs = zip(*members, strict=True)
        top, bottom, left, right = min(ys), max(ys), min(xs), max(xs)
        colours = {tuple(int(v) for v in pixels[y, x]) for y, x in members}
        cy, cx = (top + bottom) // 2, (left + right) // 2
        found.append(
            {
                "box": (left, top, right, bottom),
                "colours": colours,
                "centre_inked": bool(ink[cy, cx]),
                "corner_inked": bool(ink[top, left]),
            }
        )
    return found


def classify(component: dict) -> dict[str, str]:
    """Read an object's attributes back from its pixels, using only the drawing rules."""
    left, top, right, bottom = component["box"]
    width, height = right - left + 1, bottom - top + 1
    (colour,) = component["colours"]
    by_rgb = {rgb: name for name, rgb in COLOR_RGB.items()}
    # a tall rectangle is a cylinder; a square box is a cube if its corner is inked, else a disc
    shape = "cylinder" if width < height else "cube" if component["corner_inked"] else "sphere"
    return {
        "color": by_rgb[colour],
        "size": {40: "large", 20: "small"}[height],
        "material": "metal" if component["centre_inked"] else "rubber",
        "shape": shape,
    }


def test_pngs_carry_no_metadata(sample: Path) -> None:
    for path in sorted((sample / "images").rglob("*.png")):
        assert set(png_chunk_types(path.read_bytes())) == {b"IHDR", b"IDAT", b"IEND"}


def test_layout_and_real_keys(sample: Path) -> None:
    assert sorted(p.name for p in sample.iterdir()) == [MARKER, "images", "scenes"]
    for split, count in (("train", N_TRAIN), ("val", N_VAL)):
        document = raw_scenes(sample, split)
        assert set(document) == {"info", "scenes"}
        assert set(document["info"]) == {"split", "version", "date", "license"}
        assert document["info"]["split"] == split
        assert len(document["scenes"]) == count
        for k, scene in enumerate(document["scenes"]):
            assert set(scene) == SCENE_KEYS
            assert scene["image_index"] == k
            assert scene["image_filename"] == f"CLEVR_{split}_{k:06d}.png"
            assert set(scene["relationships"]) == {"left", "right", "front", "behind"}
            assert 3 <= len(scene["objects"]) <= 6
            for obj in scene["objects"]:
                assert set(obj) == OBJECT_KEYS
                assert len(obj["3d_coords"]) == 3 and len(obj["pixel_coords"]) == 3
        names = sorted(p.name for p in (sample / "images" / split).iterdir())
        assert names == [s["image_filename"] for s in document["scenes"]]


def test_scenes_round_trip_through_the_reader(sample: Path) -> None:
    for split in ("train", "val"):
        document = raw_scenes(sample, split)
        scenes = read_clevr_scenes(sample, split)
        assert [s.image_filename for s in scenes] == [
            s["image_filename"] for s in document["scenes"]
        ]
        for scene, raw in zip(scenes, document["scenes"], strict=True):
            assert scene.split == split and scene.image_index == raw["image_index"]
            assert list(scene.objects) == raw["objects"]  # original dicts kept
            assert scene.image_path == sample / "images" / split / raw["image_filename"]
            assert scene.image_path.is_file()


def test_drawn_objects_match_the_json(sample: Path) -> None:
    """Counting objects by attribute in the PNG gives the JSON's counts, scene by scene."""
    for split in ("train", "val"):
        for scene in read_clevr_scenes(sample, split):
            with Image.open(scene.image_path) as image:
                assert image.size == (480, 320) and image.mode == "RGBA"
                found = components(image)
            assert len(found) == len(scene.objects)
            drawn = [classify(c) for c in found]
            for attribute, values in CLEVR_VOCAB.items():
                for value in values:
                    from_json = scene.count(attribute, value)
                    assert sum(d[attribute] == value for d in drawn) == from_json
            centres = sorted(
                ((c["box"][0] + c["box"][2]) / 2, (c["box"][1] + c["box"][3]) / 2) for c in found
            )
            expected = sorted(tuple(o["pixel_coords"][:2]) for o in scene.objects)
            for (x, y), (ex, ey) in zip(centres, expected, strict=True):
                assert abs(x - ex) <= 1 and abs(y - ey) <= 1


def test_every_value_reachable_and_one_absent(sample: Path) -> None:
    for split in ("train", "val"):
        scenes = read_clevr_scenes(sample, split)
        for attribute, values in CLEVR_VOCAB.items():
            seen = Counter(obj[attribute] for s in scenes for obj in s.objects)
            assert set(seen) == set(values), (split, attribute)
        # at least one scene lacks some value entirely (a count-0 question is possible)
        assert any(s.count("size", "small") == 0 for s in scenes)


def test_relationships_are_consistent(sample: Path) -> None:
    for scene in raw_scenes(sample, "train")["scenes"]:
        rel = scene["relationships"]
        n = len(scene["objects"])
        for i in range(n):
            for j in range(n):
                assert (j in rel["left"][i]) == (i in rel["right"][j])
                assert (j in rel["front"][i]) == (i in rel["behind"][j])
            xi = scene["objects"][i]["pixel_coords"][0]
            assert all(scene["objects"][j]["pixel_coords"][0] < xi for j in rel["left"][i])


def test_sample_is_deterministic(sample: Path, tmp_path: Path) -> None:
    def hashes(root: Path) -> dict[str, str]:
        return {
            p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*"))
            if p.is_file()
        }

    assert hashes(write_sample_clevr(tmp_path / "again")) == hashes(sample)
    other = write_sample_clevr(tmp_path / "other", n_train=2, n_val=1, seed=1)
    assert raw_scenes(other, "train")["scenes"] != raw_scenes(sample, "train")["scenes"][:2]


def test_limit_and_skip_image_check(copy: Path) -> None:
    assert [s.image_index for s in read_clevr_scenes(copy, "val", limit=3)] == [0, 1, 2]
    shutil.rmtree(copy / "images" / "val")
    assert len(read_clevr_scenes(copy, "val", check_images=False)) == N_VAL


def test_missing_scenes_file(copy: Path) -> None:
    scenes_path(copy, "val").unlink()
    with pytest.raises(SourceError, match="scenes file not found") as info:
        read_clevr_scenes(copy, "val")
    assert str(scenes_path(copy, "val")) in str(info.value) and "fix:" in str(info.value)
    with pytest.raises(SourceError, match="found CLEVR_v1.0/ inside it"):
        read_clevr_scenes(copy.parent, "train")
    with pytest.raises(SourceError, match="has no scenes"):
        read_clevr_scenes(copy, "test")


def test_malformed_json(copy: Path) -> None:
    scenes_path(copy, "train").write_text('{"info": {}, "scenes": [', encoding="utf-8")
    with pytest.raises(SourceError, match="not valid JSON") as info:
        read_clevr_scenes(copy, "train")
    assert str(scenes_path(copy, "train")) in str(info.value)
    scenes_path(copy, "train").write_text('{"info": {}}', encoding="utf-8")
    with pytest.raises(SourceError, match="expected an object with a `scenes` list"):
        read_clevr_scenes(copy, "train")


def test_missing_keys(copy: Path) -> None:
    document = raw_scenes(copy, "train")
    del document["scenes"][2]["objects"][1]["material"]
    write_raw(copy, "train", document)
    with pytest.raises(SourceError, match=r"lacks key\(s\) \['material'\]") as info:
        read_clevr_scenes(copy, "train")
    assert "scenes[2] (CLEVR_train_000002.png) objects[1]" in str(info.value)
    document = raw_scenes(copy, "val")
    del document["scenes"][4]["image_filename"]
    write_raw(copy, "val", document)
    with pytest.raises(SourceError, match=r"scenes\[4\] lacks key\(s\) \['image_filename'\]"):
        read_clevr_scenes(copy, "val")


def test_value_outside_vocabulary(copy: Path) -> None:
    document = raw_scenes(copy, "val")
    document["scenes"][1]["objects"][0]["color"] = "orange"
    write_raw(copy, "val", document)
    with pytest.raises(SourceError, match="color 'orange' is not in the CLEVR vocabulary") as info:
        read_clevr_scenes(copy, "val")
    assert "scenes[1] (CLEVR_val_000001.png) objects[0]" in str(info.value)
    assert str(scenes_path(copy, "val")) in str(info.value)


def test_scene_whose_image_is_missing(copy: Path) -> None:
    victim = copy / "images" / "train" / "CLEVR_train_000007.png"
    victim.unlink()
    with pytest.raises(SourceError, match="does not exist") as info:
        read_clevr_scenes(copy, "train")
    message = str(info.value)
    assert "scenes[7] (image_index 7) names CLEVR_train_000007.png" in message
    assert str(victim) in message and str(scenes_path(copy, "train")) in message
    assert len(read_clevr_scenes(copy, "train", limit=7)) == 7  # the limit skips it


def test_split_mismatch_and_unsafe_filename(copy: Path) -> None:
    document = raw_scenes(copy, "val")
    document["scenes"][0]["split"] = "train"
    write_raw(copy, "val", document)
    with pytest.raises(SourceError, match="says split 'train' in the val scenes file"):
        read_clevr_scenes(copy, "val")
    document["scenes"][0]["split"] = "val"
    document["scenes"][0]["image_filename"] = "../../escape.png"
    write_raw(copy, "val", document)
    with pytest.raises(SourceError, match="not a plain file name"):
        read_clevr_scenes(copy, "val")
