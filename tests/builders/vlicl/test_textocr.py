"""VL-ICL textocr rebuilt from TextOCR: the word rule, the red box, and each gold checked by
routes of its own (the red pixels, an OCR of what they enclose, the polygon geometry)."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from benchsmith.builders.vlicl import ImageHashes
from benchsmith.builders.vlicl.config import VliclConfig
from benchsmith.builders.vlicl.plan import VliclSources, build_vlicl
from benchsmith.builders.vlicl.textocr import (
    QUESTION,
    build_textocr,
    is_axis_aligned,
    target_word,
)
from benchsmith.core.errors import PlanError, SourceError
from benchsmith.core.outputs import MARKER
from benchsmith.sources.textocr.reader import TextocrImage, TextocrWord, read_textocr
from benchsmith.sources.textocr.sample import write_sample_textocr

CONFIG = VliclConfig.from_params({"tasks": ["textocr"]}, "sample")


def _build(textocr: Path, out: Path) -> Path:
    build_vlicl(CONFIG, VliclSources(textocr=textocr), out)
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("textocr_rebuild")
    textocr = write_sample_textocr(root / "sources")
    return {"textocr": textocr, "plan": _build(textocr, root / "plan")}


def _rows(plan: Path, split: str) -> list[dict]:
    path = plan / "tasks" / "textocr" / f"{split}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _red_box(path: Path) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) of the pure red pixels, found without the builder's code."""
    pixels = np.asarray(Image.open(path).convert("RGB"), dtype=int)
    red = (pixels[..., 0] > 200) & (pixels[..., 1] < 70) & (pixels[..., 2] < 70)
    ys, xs = np.nonzero(red)
    assert len(xs), f"no red box in {path}"
    return int(xs.min()), int(ys.min()), int(xs.max()), int(ys.max())


def _expected_word(document: dict, image_id: str) -> dict | None:
    """The rule recomputed on the raw JSON: legible, polygon equal to its box's corners (the
    sample draws upright words with exactly those points), the largest box."""
    candidates = []
    for ann_id in document["imgToAnns"][image_id]:
        ann = document["anns"][ann_id]
        x, y, w, h = ann["bbox"]
        upright = ann["points"] == [x, y, x + w, y, x + w, y + h, x, y + h]
        if ann["utf8_string"] != "." and upright:
            candidates.append((-w * h, ann_id, ann))
    return min(candidates)[2] if candidates else None


def test_each_gold_is_the_largest_legible_upright_word_of_its_image(built):
    plan, textocr = built["plan"], built["textocr"]
    for split, source in (("support", "train"), ("query", "val")):
        document = json.loads((textocr / f"TextOCR_0.1_{source}.json").read_text())
        rows = _rows(plan, split)
        assert len(rows) == {"support": 10, "query": 4}[split]
        for row in rows:
            extras = row["extras"]
            expected = _expected_word(document, extras["textocr_img_id"])
            assert expected is not None and extras["ann_id"] == expected["id"]
            assert row["answer"] == expected["utf8_string"] and row["question"] == QUESTION
            assert extras["bbox"] == expected["bbox"] and extras["points"] == expected["points"]
            image = document["imgs"][extras["textocr_img_id"]]
            assert (extras["img_w"], extras["img_h"]) == (image["width"], image["height"])
        # images without any usable word were never drawn
        unusable = [i for i in document["imgs"] if _expected_word(document, i) is None]
        assert unusable and not {r["extras"]["textocr_img_id"] for r in rows} & set(unusable)


def test_the_red_box_encloses_the_gold_word_and_nothing_else_changed(built):
    plan, textocr = built["plan"], built["textocr"]
    for row in _rows(plan, "support") + _rows(plan, "query"):
        rendered = plan / "rendered" / row["images"][0]["file"]
        left, top, right, bottom = _red_box(rendered)
        x, y, w, h = row["extras"]["bbox"]
        assert left < x and top < y and right > x + w - 1 and bottom > y + h - 1, row["id"]
        assert left > x - 12 and top > y - 12 and right < x + w + 12 and bottom < y + h + 12
        source = np.asarray(
            Image.open(textocr / "train_images" / f"{row['extras']['textocr_img_id']}.jpg"),
            dtype=int,
        )
        drawn = np.asarray(Image.open(rendered).convert("RGB"), dtype=int)
        away = np.ones(source.shape[:2], dtype=bool)
        away[max(0, top - 4) : bottom + 5, max(0, left - 4) : right + 5] = False
        assert np.abs(drawn[away] - source[away]).mean() < 2.0, row["id"]


def test_an_ocr_engine_reads_the_gold_inside_the_red_box(built):
    """Pixels, not annotations: RapidOCR reads the crop the red box encloses and must find the
    row's answer there, for every row of both splits."""
    from benchsmith.images.ocr_engines import ocr_backend

    engine = ocr_backend("rapidocr")
    plan = built["plan"]
    for row in _rows(plan, "support") + _rows(plan, "query"):
        path = plan / "rendered" / row["images"][0]["file"]
        left, top, right, bottom = _red_box(path)
        crop = Image.open(path).convert("RGB").crop((left, top, right + 1, bottom + 1))
        assert engine.read_line(crop).text.replace(" ", "") == row["answer"], row["id"]


def _word(id: str, box: tuple, text: str = "WORD", points: tuple | None = None) -> TextocrWord:
    x, y, w, h = box
    corners = points or (x, y, x + w, y, x + w, y + h, x, y + h)
    return TextocrWord(id, "img", tuple(map(float, box)), tuple(map(float, corners)), text, w * h)


def _image(*words: TextocrWord, size: tuple[int, int] = (200, 100)) -> TextocrImage:
    return TextocrImage("img", "train", *size, "train/img.jpg", Path("img.jpg"), tuple(words))


def _turned(box: tuple, degrees: float) -> tuple[float, ...]:
    x, y, w, h = box
    cx, cy, a = x + w / 2, y + h / 2, np.deg2rad(degrees)
    corners = [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
    return tuple(
        v
        for px, py in corners
        for v in (
            cx + (px - cx) * np.cos(a) - (py - cy) * np.sin(a),
            cy + (px - cx) * np.sin(a) + (py - cy) * np.cos(a),
        )
    )


def test_the_rule_drops_illegible_turned_and_outside_words_and_breaks_ties_by_id():
    big, small = (10, 10, 80, 20), (10, 50, 30, 10)
    assert target_word(_image(_word("a", big, "."), _word("b", small)))[0].id == "b"
    turned = _word("a", (0, 0, 80, 40), points=_turned((10, 10, 60, 12), 20))
    assert (
        not is_axis_aligned(turned) and target_word(_image(turned, _word("b", small)))[0].id == "b"
    )
    assert is_axis_aligned(_word("a", (0, 0, 60, 12), points=_turned((0, 0, 60, 12), 1.0)))
    outside = _word("a", (150, 10, 80, 20))  # runs 30 px past the right edge
    assert target_word(_image(outside, _word("b", small)))[0].id == "b"
    assert target_word(_image(_word("z", small), _word("y", small)))[0].id == "y"
    assert target_word(_image(_word("a", big, " ")))[1] == "only_illegible"
    assert target_word(_image(turned))[1] == "only_rotated_or_curved"
    assert target_word(_image(outside))[1] == "only_outside_image"
    assert target_word(_image())[1] == "no_words"


def test_skips_are_counted_and_too_few_images_name_the_size_key(built, tmp_path):
    info = json.loads((built["plan"] / "build_info.json").read_text())
    stats = info["stats"]["textocr"]
    assert stats["skipped_images"] == {
        "train": {"only_rotated_or_curved": 1},
        "val": {"only_rotated_or_curved": 1},
    }
    assert any(c.startswith("textocr: 10 support images") for c in info["choices"])
    train, val = (read_textocr(built["textocr"], s) for s in ("train", "val"))
    with pytest.raises(PlanError, match="hold 5 images .* 6 are needed") as error:
        build_textocr(train, val, n_support=10, n_query=6, seed=0, root=built["textocr"],
                      hashes=ImageHashes(), annotations_sha256={"train": "", "val": ""},
                      rendered_dir=tmp_path)  # fmt: skip
    assert "vlicl.sizes.<profile>.textocr" in str(error.value)
    with pytest.raises(PlanError, match="in both the train and val annotations"):
        build_textocr(train, [*val, train[0]], n_support=1, n_query=1, seed=0,
                      root=built["textocr"], hashes=ImageHashes(),
                      annotations_sha256={"train": "", "val": ""}, rendered_dir=tmp_path)  # fmt: skip


def _tree(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name not in ("build_info.json", MARKER)
    }


def test_a_copy_of_the_sources_elsewhere_rebuilds_byte_for_byte_and_a_seed_changes_it(
    built, tmp_path
):
    moved = Path(shutil.copytree(built["textocr"], tmp_path / "elsewhere" / "TextOCR"))
    again = _build(moved, tmp_path / "again")
    assert _tree(again) == _tree(built["plan"])
    drawn = {_ids(again)}
    for seed in (1, 2, 3):  # 10 of 11 usable train images: another seed drops another one
        other = tmp_path / f"seed{seed}"
        config = VliclConfig.from_params({"tasks": ["textocr"], "seed": seed}, "sample")
        build_vlicl(config, VliclSources(textocr=moved), other)
        drawn.add(_ids(other))
    assert len(drawn) > 1


def _ids(plan: Path) -> tuple[str, ...]:
    return tuple(r["extras"]["ann_id"] for r in _rows(plan, "support") + _rows(plan, "query"))


def _victim(built: dict, tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the sources and the file of an image the build draws."""
    copy = Path(shutil.copytree(built["textocr"], tmp_path / "TextOCR"))
    image_id = _rows(built["plan"], "query")[0]["extras"]["textocr_img_id"]
    return copy, copy / "train_images" / f"{image_id}.jpg"


def test_a_truncated_image_is_an_error_naming_it_and_the_old_plan_stays(built, tmp_path):
    copy, victim = _victim(built, tmp_path)
    out = Path(shutil.copytree(built["plan"], tmp_path / "plan"))
    before = _tree(out)
    victim.write_bytes(victim.read_bytes()[:300])
    with pytest.raises(SourceError, match="cannot decode the TextOCR image") as info:
        _build(copy, out)
    assert str(victim) in str(info.value) and _tree(out) == before


def test_an_image_of_another_size_than_annotated_is_refused(built, tmp_path):
    copy, victim = _victim(built, tmp_path)
    with Image.open(victim) as picture:
        picture.resize((picture.width // 2, picture.height // 2)).save(victim, "JPEG")
    with pytest.raises(SourceError, match="but its annotations say") as info:
        _build(copy, tmp_path / "plan")
    assert str(victim) in str(info.value) and "unchanged" in str(info.value)
