"""TextOCR ingested from the release (until the TextOCR source reader lands): rows whose images
show a red box around their answer, the annotation fields kept or counted as missing, and the
scorer reading OCR replies (the original cuts "www.ikea.com" at its first dot; fixed does not)."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest
from PIL import Image, ImageDraw
from vlicl_fixtures import publish_ingested

from benchsmith.builders.vlicl import ImageHashes
from benchsmith.builders.vlicl.config import VliclConfig
from benchsmith.builders.vlicl.ingest import ingest_task
from benchsmith.builders.vlicl.plan import VliclSources, build_vlicl
from benchsmith.core.errors import BenchsmithError, SourceError
from benchsmith.scoring.vlicl_normalise import is_unparsed, matcher

WORDS = ("STOP", "www.ikea.com", "Exit", "Inc.", "café", "42")
QUESTION = "What text is shown in the red box?"


def boxed(word: str, box: tuple[int, int, int, int]) -> bytes:
    image = Image.new("RGB", (96, 64), (235, 235, 235))
    draw = ImageDraw.Draw(image)
    x, y, w, h = box
    draw.text((x + 2, y + 2), word, fill=(0, 0, 0))
    draw.rectangle((x, y, x + w, y + h), outline=(255, 0, 0), width=2)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def write_textocr_release(root: Path) -> Path:
    folder = root / "textocr"
    folder.mkdir(parents=True)
    rows: dict[str, list] = {"support": [], "query": []}
    for k, word in enumerate(WORDS):
        split = "support" if k < 4 else "query"
        box = (4 + k, 10, 80, 20)
        entry = {"image": [f"textocr/{split}/img{k}.png"], "question": QUESTION, "answer": word,
                 "bbox": list(box), "points": [box[0], box[1], box[0] + box[2], box[1]],
                 "area": box[2] * box[3], "img_w": 96, "img_h": 64,
                 "textocr_img_id": f"a{k:015x}", "ann_id": f"a{k:015x}_{k}"}  # fmt: skip
        if k == 2:  # an entry without its annotation: kept, counted
            entry = {key: entry[key] for key in ("image", "question", "answer")}
        rows[split].append((entry, boxed(word, box)))
    for split, items in rows.items():
        (folder / f"{split}.json").write_text(json.dumps([e for e, _ in items]), encoding="utf-8")
        with zipfile.ZipFile(folder / f"{split}.zip", "w") as archive:
            for entry, data in items:
                archive.writestr(entry["image"][0].split("/", 1)[1], data)
    return root


def test_rows_keep_the_word_its_box_and_count_missing_annotations(tmp_path):
    release = write_textocr_release(tmp_path / "VL-ICL")
    rows = ingest_task(release, "textocr", ImageHashes())
    assert [r["answer"] for r in rows.support + rows.query] == list(WORDS)
    for row in rows.support + rows.query:
        [ref] = row["images"]
        data = (release / ref["file"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == ref["sha256"]
        extras = row["extras"]
        if extras["bbox"]:
            x, y, w, h = (int(v) for v in extras["bbox"])
            image = Image.open(io.BytesIO(data)).convert("RGB")
            assert image.getpixel((x, y + h // 2)) == (255, 0, 0)  # the box is where it says
            assert extras["area"] == w * h and extras["ann_id"].startswith(extras["textocr_img_id"])
    assert rows.stats == {
        "support_without_annotation": 1,
        "extracted_zips": ["support.zip", "query.zip"],
    }
    missing = rows.support[2]["extras"]
    assert (missing["bbox"], missing["area"], missing["img_w"], missing["ann_id"]) == (
        [],
        -1.0,
        -1,
        "",
    )


def test_an_entry_without_one_image_or_a_word_is_named(tmp_path):
    release = write_textocr_release(tmp_path / "VL-ICL")
    entries = json.loads((release / "textocr" / "query.json").read_text())
    entries[1]["answer"] = ""
    (release / "textocr" / "query.json").write_text(json.dumps(entries))
    with pytest.raises(SourceError, match=r"query.json\[1\]: a TextOCR item needs one image"):
        ingest_task(release, "textocr", ImageHashes())


def test_textocr_is_rebuilt_or_ingested_and_a_rebuild_names_the_folder_it_needs(tmp_path):
    config = VliclConfig.from_params({"tasks": ["textocr"]}, "sample")
    assert config.mode == "rebuild" and config.tasks == ("textocr",)
    with pytest.raises(BenchsmithError, match="needs the TextOCR folder") as info:
        build_vlicl(config, VliclSources(), tmp_path / "plan")
    assert "--textocr" in str(info.value) and not (tmp_path / "plan").exists()
    cobsat = VliclConfig.from_params({"tasks": ["cobsat"]}, "sample")
    with pytest.raises(BenchsmithError, match=r"\['cobsat'\] come from the VL-ICL release") as info:
        build_vlicl(cobsat, VliclSources(), tmp_path / "plan")
    assert "vlicl.sources.ingest_dir" in str(info.value) and not (tmp_path / "plan").exists()


@pytest.mark.parametrize(("reply", "gold", "fixed", "legacy"), [
    ("STOP", "STOP", True, True),
    ("stop", "STOP", True, True),  # the original compares case-insensitively too
    ("www.ikea.com", "www.ikea.com", True, False),  # the original cuts at the first "."
    ("Inc.", "Inc.", True, False),
    ('"Exit"', "Exit", True, False),
    ("The text in the red box is STOP.", "STOP", True, False),
    ("Text: café", "café", True, False),
    ("Textbook", "book", False, False),  # a word, not an echoed lead-in
    ("STOP\nIt is a road sign.", "STOP", True, True),
    ("", "STOP", False, False),
    ("SHOP", "STOP", False, False),
])  # fmt: skip
def test_ocr_replies_are_read_as_words(reply, gold, fixed, legacy):
    assert matcher("textocr", "fixed")(reply, gold) is fixed
    assert matcher("textocr", "legacy")(reply, gold) is legacy
    assert is_unparsed("textocr", reply) is (reply == "")


def test_published_textocr_audits_and_scores_each_mode(tmp_path, monkeypatch, capsys):
    from benchsmith.cli import main

    release = write_textocr_release(tmp_path / "VL-ICL")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text("vlicl:\n  shots:\n    textocr: [0, 1, 2]\n")
    published = publish_ingested(release, ["textocr"], tmp_path)
    assert main(["audit", str(published), "--workers", "1"]) == 0
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("".join(
        json.dumps({"query_id": f"textocr/query/{k:05d}", "n_shot": 0, "seed": 0,
                    "response": word}) + "\n" for k, word in enumerate(WORDS[4:])))  # fmt: skip
    scores = {}
    for mode in ([], ["--legacy"]):
        capsys.readouterr()
        assert main(["score", str(published), "--config", "textocr", "--predictions",
                     str(predictions), *mode]) == 0  # fmt: skip
        scores[bool(mode)] = json.loads(capsys.readouterr().out)["overall"]["accuracy"]
    assert scores == {False: 1.0, True: 1.0}  # "café" and "42" have no dot to cut at
