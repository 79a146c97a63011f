"""Problems to questions: ids, types, points, options, image classes, levels (spec section 4)."""

from __future__ import annotations

import pytest

from benchsmith.builders.multi.questions import (
    SourceProblem,
    answer_blanks,
    education_of,
    parse_options,
    points_of,
    questions_of,
)
from benchsmith.sources.exams.release import read_release
from benchsmith.sources.exams.release_sample import write_sample_release


def test_options_run_in_letter_order_and_ignore_letters_inside_the_stem():
    stem, options = parse_options("若 AB=AC，则 A.B 间（ ）[MASK]\nA. 垂直\nB. 平行\nC. AB=2")
    assert stem.endswith("[MASK]")
    assert [o["label"] for o in options] == ["A", "B", "C"]
    assert [o["text"] for o in options] == ["垂直", "平行", "AB=2"]
    _, inline = parse_options("不同的是[MASK]\nA. [IMAGE_2] B. [IMAGE_3] C. [IMAGE_4]")
    assert [o["text"] for o in inline] == ["[IMAGE_2]", "[IMAGE_3]", "[IMAGE_4]"]
    assert parse_options("没有选项的填空 [MASK]") == ("没有选项的填空 [MASK]", [])


def test_points_follow_the_paper():
    assert answer_blanks("1\n2或二") == [["1"], ["2", "二"]]
    assert answer_blanks("春；秋") == [["春"], ["秋"]]
    assert [points_of(t, a) for t, a in (("SA", "B"), ("MA", "ACE"), ("FB", "1\n2或二"),
                                         ("OP", "long"), ("Other", "略"))] == [1, 3, 2, 1, 0]  # fmt: skip


def test_levels_and_tracks():
    assert education_of({"education": "初中"}) == ("JuH", "School")
    assert education_of({"education": "大学"}) == ("Uni", "School")
    assert education_of({"education": "驾考", "subject": ["驾考"]}) == ("Society", "Driving")
    assert education_of({"education": "社会", "subject": ["行测"]}) == ("Society", "AAT")
    with pytest.raises(ValueError, match="neither 驾考 nor 行测"):
        education_of({"education": "社会", "subject": ["历史"]})
    with pytest.raises(ValueError, match="unknown education"):
        education_of({"education": "小学"})


@pytest.fixture(scope="module")
def sample_rows(tmp_path_factory) -> dict[str, dict]:
    folder = tmp_path_factory.mktemp("release")
    write_sample_release(folder)
    release = read_release(folder)
    rows = {}
    for problem_id, record in release.problems.items():
        files = tuple(f"images/{p.split('/images/')[1]}" for p in record["img_paths"])
        problem = SourceProblem(problem_id, record, "release", "release", "p.json", "0" * 64,
                                files, tuple(f"{k:064x}" for k in range(len(files))), "v")  # fmt: skip
        rows.update({r["question_id"]: r for r in questions_of(problem)})
    return rows


def test_sample_release_questions(sample_rows):
    assert sorted(sample_rows) == sorted(["czsx_0_0", "shjk_0_0", "gzsw_0_0", "gzwl_0_0",
                                          "gzwl_0_1", "shxc_0_0", "czdl_0_0", "czyw_0_0",
                                          "dxgs_0_0"])  # fmt: skip
    shared = sample_rows["gzwl_0_1"]
    assert shared["text"] == shared["problem_content"] + "\n" + shared["question_content"]
    assert (sample_rows["gzwl_0_0"]["question_type"], sample_rows["gzwl_0_1"]["question_type"]) == (
        "FB", "OP")  # fmt: skip
    assert sample_rows["gzwl_0_0"]["points"] == 2
    ma = sample_rows["gzsw_0_0"]
    assert (ma["points"], ma["image_class"], ma["image_numbers"]) == (3, "SI", [1])
    mi = sample_rows["shxc_0_0"]
    assert (mi["image_class"], mi["num_images"], mi["image_in_choice"]) == ("MI", 4, True)
    assert (mi["education"], mi["track"]) == ("Society", "AAT")
    assert len(sample_rows["dxgs_0_0"]["options"]) == 13
    assert sample_rows["shjk_0_0"]["knowledge"] == ["安全驾驶"]  # a bare string in the release
    assert sample_rows["czdl_0_0"]["points"] == 0  # Other: not scored
    image_sources = [s for s in mi["sources"] if s["split"] == "image"]
    assert [s["file"] for s in image_sources] == mi["image_paths"]
