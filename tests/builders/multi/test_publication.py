"""Publish: three configs that load with `datasets`, images byte-equal to their sources, a card
with the measurements, a decision log; the audit re-derives every row."""

from __future__ import annotations

import json

import datasets

from benchsmith.cli import main


def test_configs_load_and_match_the_plan(multi_build):
    published = multi_build["published"]
    plan = [json.loads(x) for x in (multi_build["plan"] / "questions.jsonl").read_text("utf-8")
            .splitlines()]  # fmt: skip
    questions = datasets.load_dataset(str(published), "questions", split="test")
    elite = datasets.load_dataset(str(published), "elite", split="test")
    extend = datasets.load_dataset(str(published), "extend", split="test")
    assert questions["question_id"] == [r["question_id"] for r in plan]
    assert sorted(elite["question_id"]) == sorted(r["question_id"] for r in plan if r["in_elite"])
    assert len(extend) == 3
    features = questions.features
    row = questions[questions["question_id"].index("gzsw_0_0")]
    assert features["question_type"].int2str(row["question_type"]) == "MA"
    assert features["education"].int2str(row["education"]) == "SeH"
    assert features["image_class"].int2str(row["image_class"]) == "SI"
    assert row["points"] == 3 and row["answer"] == "ACE" and len(row["options"]) == 5
    image = row["images"][0]
    source = multi_build["release"] / row["image_paths"][0]
    assert image.size == __import__("PIL.Image").Image.open(source).size
    shxc = questions[questions["question_id"].index("shxc_0_0")]
    assert features["track"].int2str(shxc["track"]) == "AAT" and len(shxc["images"]) == 4
    knowledge = extend[extend["knowledge_key"].index("细胞结构")]
    assert knowledge["question_ids"] == ["gzsw_0_0"] and len(knowledge["images"]) == 1
    assert (published / "removed.jsonl").is_file()


def test_card_reports_the_build(multi_build):
    card = (multi_build["published"] / "README.md").read_text("utf-8")
    assert "OCR character error rate" in card and "noisy" in card
    assert "MinHash" in card and "removed.jsonl" in card
    assert "the release's hard list as published" in card
    info = json.loads((multi_build["published"] / "build_info.json").read_text("utf-8"))
    assert info["family"] == "multi" and set(info["configs"]) == {"questions", "elite", "extend"}
    from huggingface_hub import DatasetCard

    metadata = DatasetCard(card).data.to_dict()
    assert metadata["license"] == "other" and metadata["size_categories"] == ["n<1K"]


def test_audit_passes_and_names_a_changed_source(multi_build, tmp_path, capsys):
    assert main(["audit", str(multi_build["published"])]) == 0
    capsys.readouterr()
    import shutil

    moved = tmp_path / "converted"
    shutil.copytree(multi_build["converted"], moved)
    figure = next((moved / "images").glob("czsx_html-q0001_1.png"))  # a kept question's figure
    figure.write_bytes(figure.read_bytes() + b"\0")
    code = main(["audit", str(multi_build["published"]), f"--root=converted={moved}"])
    out = capsys.readouterr().out
    assert code == 1 and "czsx_html-q0001_1.png" in out


def test_publish_refuses_what_is_not_a_plan(multi_build, tmp_path, capsys):
    argv = ["publish", "multi", str(multi_build["questions"]), "--out", str(tmp_path / "out")]
    assert main(argv) == 2
    assert "not a MULTI select folder" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
