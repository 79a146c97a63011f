"""The MULTI release read as it ships: the miniature in the real layout, its quirks, every
fault named, and linking a copy (folder or zip, extracted with path checks)."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest

from benchsmith.cli import main
from benchsmith.core.errors import SourceError
from benchsmith.sources.exams.release import image_relative, read_csv_texts, read_release
from benchsmith.sources.exams.release_sample import (
    HARD_LIST,
    PROBLEM_FILE,
    RELEASE_FILE,
    write_sample_release,
)
from benchsmith.sources.exams.source import link_local_release


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    return write_sample_release(tmp_path_factory.mktemp("multi") / "release")


@pytest.fixture
def copy(release, tmp_path) -> Path:
    return Path(shutil.copytree(release, tmp_path / "copy"))


def test_the_miniature_covers_every_case(release):
    data = read_release(release)
    assert data.has_answers and data.problem_file.name == PROBLEM_FILE
    ids = list(data.question_ids())
    assert len(data.problems) == 8 and len(ids) == 9 and "gzwl_0_1" in ids
    types = {t for r in data.problems.values() for t in r["problem_type_list"]}
    assert types == {"单选", "多选", "填空", "解答", "其他"}
    assert data.problems["gzsw_0"]["problem_answer_list"] == ["ACE"]
    assert data.problems["gzwl_0"]["problem_answer_list"][0] == "1\n2或二"
    assert data.knowledge_keys(data.problems["shjk_0"]) == ["安全驾驶"]  # a bare string
    assert data.knowledge["细胞结构"]["knowledge_images"]  # an Extend entry with an image
    assert data.problems["dxgs_0"]["problem_content_list"][0].count("\n") == 13  # A..M
    assert len(data.problems["shxc_0"]["img_paths"]) == 4  # images inside the options
    assert data.hard_list == HARD_LIST
    assert data.captions["blip"]["images/gzsw/0_1.png"] == "caption of 0_1, with a comma"
    without = read_release(release, release / RELEASE_FILE)
    assert not without.has_answers
    assert all("problem_answer_list" not in r for r in without.problems.values())


def test_csv_and_paths_as_the_release_writes_them(tmp_path):
    csv = tmp_path / "ocr_v1.3.1_20241210_easyocr.csv"
    csv.write_text("../data/images/czls/502_1.png,一个、两个,三个\n\n")
    assert read_csv_texts(csv) == {"images/czls/502_1.png": "一个、两个,三个"}
    assert image_relative("../data/images/a/1_1.png") == "images/a/1_1.png"
    csv.write_text("no comma here\n")
    with pytest.raises(SourceError, match="line 1 has no comma"):
        read_csv_texts(csv)


def edit(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")


def test_every_fault_is_named(copy):
    problems = copy / PROBLEM_FILE
    saved = problems.read_text(encoding="utf-8")
    problems.write_text(saved[:-40], encoding="utf-8")
    with pytest.raises(SourceError, match="not valid JSON") as error:
        read_release(copy)
    assert PROBLEM_FILE in str(error.value)
    problems.write_text(saved, encoding="utf-8")
    edit(problems, lambda d: d["czsx_0"].update(problem_content="[IMAGE_3] 见图"))
    with pytest.raises(SourceError, match=r"czsx_0: \[IMAGE_3\] points past its 0 img_paths"):
        read_release(copy)
    problems.write_text(saved, encoding="utf-8")
    edit(problems, lambda d: d["gzwl_0"].update(problem_type_list=["填空"]))
    with pytest.raises(SourceError, match="problem_content_list has 2 entries for 1 questions"):
        read_release(copy)
    problems.write_text(saved, encoding="utf-8")
    (copy / "images" / "shxc" / "0_3.png").unlink()
    with pytest.raises(SourceError, match="shxc_0: image") as error:
        read_release(copy)
    assert "0_3.png" in str(error.value)
    shutil.copy(copy.parent / "copy" / "images" / "shxc" / "0_1.png",
                copy / "images" / "shxc" / "0_3.png")  # fmt: skip
    edit(copy / "hard_list_v1.3.0_20241203.json", lambda d: d.append("zzzz_9_0"))
    with pytest.raises(SourceError, match="hard list names 1 question"):
        read_release(copy)


def test_linking_a_folder_or_a_zip(release, tmp_path):
    linked = link_local_release(release, tmp_path / "a")
    assert linked.is_symlink() and read_release(linked).problems
    archive = tmp_path / "MULTI_v1.3.1_20251016_release.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for file in sorted(release.rglob("*")):
            if file.is_file():
                z.write(file, f"data/{file.relative_to(release).as_posix()}")
    extracted = link_local_release(archive, tmp_path / "b")
    assert not extracted.is_symlink() and len(read_release(extracted).problems) == 8
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as z:
        z.writestr("../escape.json", "{}")
    with pytest.raises(SourceError):
        link_local_release(evil, tmp_path / "c")
    assert not (tmp_path / "escape.json").exists()
    with pytest.raises(SourceError, match="not a MULTI release"):
        link_local_release(tmp_path / "a" / "release" / "images", tmp_path / "d")
    (tmp_path / "two").mkdir()
    for name in ("x", "y"):
        shutil.copytree(release, tmp_path / "two" / name)
    with pytest.raises(SourceError, match="2 folders below this one hold a MULTI release"):
        link_local_release(tmp_path / "two", tmp_path / "e")


def test_source_verbs(tmp_path, capsys):
    assert main(["source", "sample", "exams", "--out", str(tmp_path / "ex")]) == 0
    assert main(["source", "check", "exams", str(tmp_path / "ex")]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["release"]["questions"] == 9 and summary["html_pages"] == 5
    assert summary["page_images"] == 8
    assert main(["source", "check", "exams", str(tmp_path)]) == 2
    assert "no exam sources here" in capsys.readouterr().err
