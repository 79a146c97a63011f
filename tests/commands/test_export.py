"""``export vlmevalkit``: the TSV VLMEvalKit reads, round-tripping every published image."""

from __future__ import annotations

import ast
import base64
import csv
import shutil
import sys

import datasets

from benchsmith.cli import main


def read_tsv(path) -> list[dict]:
    csv.field_size_limit(sys.maxsize)
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def images_of(cell: str) -> list[bytes]:
    """As VLMEvalKit's ``toliststr`` reads it: a list literal, or one base64 string."""
    items = ast.literal_eval(cell) if cell.startswith("[") else ([cell] if cell else [])
    return [base64.b64decode(i) for i in items]


def test_mmiu_multiple_choice_round_trips(sample_project, tmp_path):
    published = sample_project / "published" / "mmiu"
    out = tmp_path / "mmiu.tsv"
    assert main(["export", "vlmevalkit", str(published), "--config", "jigsaw_puzzle_solving",
                 "--out", str(out)]) == 0  # fmt: skip
    rows = read_tsv(out)
    gold = datasets.load_dataset(str(published), "jigsaw_puzzle_solving", split="test")
    gold = gold.cast_column("images", datasets.List(datasets.Image(decode=False)))
    assert [r["id"] for r in rows] == gold["id"] and [r["index"] for r in rows] == [
        str(k) for k in range(len(rows))]  # fmt: skip
    for row, item in zip(rows, gold, strict=True):
        assert images_of(row["image"]) == [i["bytes"] for i in item["images"]]
        letters = [k for k in "ABCDEFGH" if k in row and row[k]]
        assert [row[k] for k in letters] == item["options"]
        assert row["answer"] == item["answer"] and row["category"] == "jigsaw_puzzle_solving"
        assert row["l2-category"] == "2D-spatial"
        assert item["question"] in row["question"] and "Select from" not in row["question"]


FILES = {"image": "{}.tsv", "text": "{}_text.tsv", "text_open": "{}_text_open.tsv"}


def exported(folder, name: str) -> dict[str, list[dict]]:
    """Each form's rows (the forms whose file was written)."""
    paths = {form: folder / pattern.format(name) for form, pattern in FILES.items()}
    return {form: read_tsv(path) for form, path in paths.items() if path.exists()}


def test_multi_exports_sa_and_fb_and_no_row_vlmevalkit_would_drop(sample_project, tmp_path,
                                                                   capsys):  # fmt: skip
    """VLMEvalKit drops a row with an empty image from an image TSV (skip_noimg): text-only
    questions go to the two files it reads without images, chosen by their columns as its
    build_dataset chooses (options and no picture column: text multiple choice; no options,
    image_path "[]": short answer with no picture)."""
    published = sample_project / "published" / "multi"
    out = tmp_path / "multi.tsv"
    assert main(["export", "vlmevalkit", str(published), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "left out" in err  # MA, OP and Other are counted
    assert "--data multi multi_text multi_text_open" in err
    files = exported(tmp_path, "multi")
    gold = datasets.load_dataset(str(published), "questions", split="test")
    gold = gold.cast_column("images", datasets.List(datasets.Image(decode=False)))
    kinds = gold.features["question_type"]
    expected = {g["question_id"]: g for g in gold if kinds.int2str(g["question_type"]) in
                ("SA", "FB")}  # fmt: skip
    listed = [r["id"] for rows in files.values() for r in rows]
    assert sorted(listed) == sorted(expected)  # each once, in one file; elite left out
    assert set(files) == set(FILES) and all(files.values())
    for form, rows in files.items():
        assert [r["index"] for r in rows] == [str(k) for k in range(len(rows))]
        for row in rows:
            item = expected[row["id"]]
            multiple_choice = kinds.int2str(item["question_type"]) == "SA"
            assert form == ("image" if item["images"] else
                            "text" if multiple_choice else "text_open"), row["id"]  # fmt: skip
            assert images_of(row.get("image", "")) == [i["bytes"] for i in item["images"]]
    text, text_open = files["text"][0], files["text_open"][0]
    assert {"A", "B"} <= set(text) and not {"image", "image_path"} & set(text)
    assert "A" not in text_open and "image" not in text_open
    assert {r["image_path"] for r in files["text_open"]} == {"[]"}
    rows = {r["id"]: r for rows in files.values() for r in rows}
    shxc = rows["shxc_0_0"]
    assert len(images_of(shxc["image"])) == 4 and shxc["answer"] == "C"
    assert shxc["category"] == "AAT" and [shxc[k] for k in "ABCD"] == ["[IMAGE_1]", "[IMAGE_2]",
                                                                        "[IMAGE_3]", "[IMAGE_4]"]  # fmt: skip
    assert rows["gzwl_0_0"]["answer"] == "1\n2或二"


def test_an_export_without_text_rows_removes_its_earlier_text_files(sample_project, tmp_path,
                                                                     capsys):  # fmt: skip
    """The text-only files are outputs like the TSV: replaced or removed when benchsmith wrote
    them and they are unchanged, refused (nothing touched) otherwise."""
    published = sample_project / "published"
    out = tmp_path / "bench.tsv"
    assert main(["export", "vlmevalkit", str(published / "multi"), "--out", str(out)]) == 0
    text = tmp_path / "bench_text.tsv"
    text.write_text(text.read_text(encoding="utf-8") + "a line added by hand\n", "utf-8")
    needle = ["export", "vlmevalkit", str(published / "mmneedle"), "--config", "m1_n2_k1",
              "--out", str(out)]  # fmt: skip
    before = out.read_bytes()
    assert main(needle) == 2
    assert "changed since" in capsys.readouterr().err and out.read_bytes() == before
    text.unlink()
    assert main(needle) == 0
    assert set(exported(tmp_path, "bench")) == {"image"}  # text_open was ours: removed
    assert not (tmp_path / ".bench_text_open.tsv.benchsmith-output").exists()


def test_every_family_exports_and_bad_input(sample_project, tmp_path, capsys):
    published = sample_project / "published"
    for family in ("mmneedle", "vlicl"):
        out = tmp_path / f"{family}.tsv"
        assert main(["export", "vlmevalkit", str(published / family), "--out", str(out)]) == 0
        rows = read_tsv(out)
        assert rows and all(r["image"] and r["answer"] for r in rows)
    assert main(["export", "vlmevalkit", str(published / "vlicl"), "--config", "episodes",
                 "--out", str(tmp_path / "x.tsv")]) == 2  # fmt: skip
    assert "episodes" in capsys.readouterr().err
    assert not (tmp_path / "x.tsv").exists()


def test_a_file_benchsmith_did_not_write_is_never_replaced(sample_project, tmp_path, capsys):
    """``--out FILE``: a user's file, or one benchsmith wrote and someone changed since, is
    refused and kept; benchsmith's own unchanged export is replaced; inside the input: refused."""
    published = sample_project / "published" / "mmneedle"
    config = ["--config", "m1_n2_k1"]
    mine = tmp_path / "my.tsv"
    mine.write_text("index\tquestion\n0\tmy own benchmark\n")
    assert main(["export", "vlmevalkit", str(published), *config, "--out", str(mine)]) == 2
    assert "did not write it" in capsys.readouterr().err
    assert mine.read_text() == "index\tquestion\n0\tmy own benchmark\n"
    ours = tmp_path / "ours.tsv"
    for _ in range(2):  # its own output, unchanged: replaced
        assert main(["export", "vlmevalkit", str(published), *config, "--out", str(ours)]) == 0
    ours.write_text(ours.read_text() + "a line added by hand\n")
    assert main(["export", "vlmevalkit", str(published), *config, "--out", str(ours)]) == 2
    assert "changed since" in capsys.readouterr().err
    assert ours.read_text().endswith("a line added by hand\n")
    inside = published / "export.tsv"
    assert main(["export", "vlmevalkit", str(published), *config, "--out", str(inside)]) == 2
    assert "inside this command's input" in capsys.readouterr().err and not inside.exists()


def test_a_curated_folder_exports_its_kept_rows_as_its_family_does(sample_project, tmp_path):
    """VLMEvalKit rows of a curated subset are the family's own rows for the kept ids, byte for
    byte (a row dropped from the subset is not exported)."""
    import pyarrow.parquet as pq

    curated = tmp_path / "multi_questions"
    shutil.copytree(sample_project / "published" / "curated" / "multi_questions", curated)
    (shard,) = (curated / "data" / "questions").glob("test-*.parquet")
    table = pq.read_table(shard)
    pq.write_table(table.slice(0, table.num_rows // 2), shard)
    kept = {str(v) for v in pq.read_table(shard, columns=["question_id"])["question_id"]}
    family_tsv, curated_tsv = tmp_path / "family.tsv", tmp_path / "curated.tsv"
    assert main(["export", "vlmevalkit", str(sample_project / "published" / "multi"),
                 "--config", "questions", "--out", str(family_tsv)]) == 0  # fmt: skip
    assert main(["export", "vlmevalkit", str(curated), "--out", str(curated_tsv), "--root",
                 f"source={sample_project / 'published' / 'multi'}"]) == 0  # fmt: skip
    family, curated_rows = exported(tmp_path, "family"), exported(tmp_path, "curated")
    # the option columns run to the file's widest question: compare the cells that hold a value
    strip = lambda rows: [{k: v for k, v in r.items() if k != "index" and v != ""}  # noqa: E731
                          for r in rows]  # fmt: skip
    for form, rows in family.items():
        theirs = [r for r in rows if r["id"] in kept]
        assert strip(curated_rows.get(form, [])) == strip(theirs), form
    mine = [r for rows in curated_rows.values() for r in rows]
    assert mine and len(mine) < sum(len(rows) for rows in family.values())


def test_mmiu_scannet_references_render_from_your_copy(sample_project, tmp_path, capsys):
    """--scannet DIR: each image published as a reference is rendered from the ScanNet copy
    into the TSV, the same bytes as the folder `build mmiu rehydrate` writes; without it the
    config is left out of a whole-folder export and refused by name, the error naming both
    ways."""
    published = sample_project / "published" / "mmiu"
    scannet = sample_project / "data" / "sources" / "scannet" / "ScanNet"
    config = "3d_pose_estimation"
    named = ["export", "vlmevalkit", str(published), "--config", config]
    assert main([*named, "--out", str(tmp_path / "refused.tsv")]) == 2
    err = capsys.readouterr().err
    assert "--scannet DIR" in err and "rehydrate" in err
    assert not (tmp_path / "refused.tsv").exists()
    assert main(["export", "vlmevalkit", str(published), "--out", str(tmp_path / "all.tsv")]) == 0
    assert config in capsys.readouterr().err  # left out, said so
    assert config not in {r["category"] for r in read_tsv(tmp_path / "all.tsv")}
    out = tmp_path / "rendered.tsv"
    assert main([*named, "--scannet", str(scannet), "--out", str(out)]) == 0
    rehydrated = tmp_path / "mmiu_full"
    assert main(["build", "mmiu", "rehydrate", str(published), "--scannet", str(scannet),
                 "--out", str(rehydrated)]) == 0  # fmt: skip
    full = tmp_path / "full.tsv"
    assert main(["export", "vlmevalkit", str(rehydrated), "--config", config,
                 "--out", str(full)]) == 0  # fmt: skip
    rows, expected = read_tsv(out), read_tsv(full)
    assert rows and rows == expected  # every column, every image byte
    assert all(images_of(r["image"]) for r in rows)
    # a copy that is not ScanNet, and a family without references
    assert main([*named, "--scannet", str(tmp_path), "--out", str(tmp_path / "x.tsv")]) == 2
    assert "no scans/ folder" in capsys.readouterr().err
    needle = sample_project / "published" / "mmneedle"
    assert main(["export", "vlmevalkit", str(needle), "--scannet", str(scannet),
                 "--out", str(tmp_path / "y.tsv")]) == 2  # fmt: skip
    assert "applies to MMIU" in capsys.readouterr().err


def test_vlicl_rows_carry_the_instruction_predict_sends_zero_shot(sample_project, tmp_path):
    """VLMEvalKit asks each VL-ICL query as predict's zero-shot request: the task's instruction,
    then ``Question: ...`` and ``Answer:``, after the query's images, not the bare
    ``shape: cylinder``."""
    from benchsmith.builders import FAMILIES
    from benchsmith.family.requests import PredictOptions, RequestSource
    from benchsmith.hf.reader import read_build_info

    published = sample_project / "published" / "vlicl"
    out = tmp_path / "vlicl.tsv"
    assert main(["export", "vlmevalkit", str(published), "--out", str(out)]) == 0
    rows = {r["id"]: r for r in read_tsv(out)}
    info = read_build_info(published)
    checked = 0
    for config in ("clevr", "open_mi", "operator_induction"):
        options = PredictOptions(shots=(0,), seeds=(0,))
        for request in FAMILIES.get("vlicl").prediction_requests(
                RequestSource(published, info, config, "query", options)):  # fmt: skip
            row = rows[request.key["query_id"]]
            text = "\n".join(p for p in request.parts if isinstance(p, str))
            assert row["question"] == text and "Answer:" in text
            assert images_of(row["image"]) == [p for p in request.parts if isinstance(p, bytes)]
            assert row["category"] == config
            checked += 1
    assert checked > 20
