"""Near duplicates: MinHash LSH candidates, confirmed by Jaccard and images; nearly every pair an
all-pairs comparison finds (and nothing else); one kept per group, the others logged."""

from __future__ import annotations

import json

import numpy as np

from benchsmith.builders.multi.config import NearDuplicates
from benchsmith.builders.multi.near_dups import (
    find_duplicate_pairs,
    gram_sets,
    jaccard,
    lsh_candidates,
    minhash_signatures,
    question_grams,
    remove_near_duplicates,
)
from benchsmith.core.ngram_index import gram_hashes

WORDS = "甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉戌亥天地玄黄宇宙洪荒日月盈昃辰宿列张"


def synthetic_texts(n: int, seed: int) -> list[str]:
    """Random question texts, every 10th one a lightly edited copy of an earlier one."""
    rng = np.random.default_rng(seed)
    texts = []
    for k in range(n):
        if k % 10 == 9:
            base = list(texts[int(rng.integers(0, k))])
            base[int(rng.integers(0, len(base)))] = "某"
            texts.append("".join(base))
        else:
            texts.append("".join(rng.choice(list(WORDS), size=40)))
    return texts


def text_rows(texts: list[str]) -> list[dict]:
    """Questions that are bare texts (no options, no answer), each its own problem."""
    return [{"text": t, "question_content": t, "problem_content": "", "options": None,
             "problem_id": str(k), "answer": ""} for k, t in enumerate(texts)]  # fmt: skip


def brute_force(texts, settings):
    """Every pair compared by exact Jaccard."""
    sets = gram_sets(texts, settings.ngram)
    return {(i, j) for i in range(len(texts)) for j in range(i + 1, len(texts))
            if jaccard(sets[i], sets[j]) >= settings.min_jaccard}  # fmt: skip


def test_the_index_finds_what_comparing_every_pair_finds():
    settings = NearDuplicates()
    texts = synthetic_texts(600, seed=3)
    found, candidates = find_duplicate_pairs(text_rows(texts), [[]] * len(texts), settings)
    truth = brute_force(texts, settings)
    pairs = {(p.left, p.right) for p in found}
    assert pairs <= truth  # confirmed by exact Jaccard: never a false pair
    assert len(truth) >= 60 and len(pairs) >= 0.97 * len(truth)  # LSH recall at J >= 0.6
    assert candidates < len(texts) * 5  # not all 179,700 pairs


def test_minhash_agreement_estimates_jaccard():
    texts = ["甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申酉", "甲乙丙丁戊己庚辛壬癸子丑寅卯辰巳午未申亥"]
    sets = gram_sets(texts, 3)
    signatures = minhash_signatures(sets, 512)
    agreement = float((signatures[0] == signatures[1]).mean())
    assert abs(agreement - jaccard(sets[0], sets[1])) < 0.08
    assert lsh_candidates(signatures, 128).tolist() == [[0, 1]]
    assert (
        lsh_candidates(minhash_signatures(gram_sets(["天地玄黄", "宇宙洪荒"], 3), 64), 16).size == 0
    )


def test_text_normalisation_ignores_markup_punctuation_and_width():
    a = question_grams("已知 $x^2=4$，则 x 等于（ ）[MASK]", 3)
    b = question_grams("已知x^2=4,则x等于()", 3)
    assert a == b


def row(qid: str, text: str, kind: str = "scan", problem: str | None = None, answer="A",
        options: list[str] | None = None, quality: float | None = None):  # fmt: skip
    """A question row as the questions step writes it; ``options`` become ``A. ...`` lines."""
    labelled = [{"label": chr(65 + k), "text": o} for k, o in enumerate(options or [])]
    content = "\n".join([text, *(f"{o['label']}. {o['text']}" for o in labelled)])
    return {"question_id": qid, "problem_id": problem or qid, "text": content,
            "question_content": content, "problem_content": "", "options": labelled or None,
            "source_kind": kind, "answer": answer, "analysis": "", "decisions": [],
            "scan_quality": quality}  # fmt: skip


def test_one_question_kept_per_group_with_the_pair_logged():
    text = "驾驶机动车在高速公路上可以随意变更车道，这种说法对吗"
    rows = [row("shjk_scan-b_0", text), row("shjk_scan-a_0", text + "。"),
            row("shjk_0_0", text, kind="release"), row("czsx_1_0", "完全不同的另一道数学题目")]  # fmt: skip
    kept, removed, summary = remove_near_duplicates(rows, [[]] * 4, NearDuplicates())
    assert [r["question_id"] for r in kept] == ["shjk_0_0", "czsx_1_0"]  # the release wins
    assert summary["removed"] == 2 and summary["groups"] == 1
    evidence = json.loads(removed[0]["decisions"][-1]["evidence"])
    assert evidence["kept"] == "shjk_0_0" and evidence["jaccard"] >= 0.6


def test_same_text_over_another_figure_or_in_one_problem_is_kept():
    text = "如图，求三角形 ABC 的面积，已知各边的长度如图中所示"
    rows = [row("a_0", text), row("b_0", text)]
    figure_a, figure_b = 0x0F0F0F0F0F0F0F0F, 0xF0F0F0F0F0F0F0F0
    kept, _, _ = remove_near_duplicates(rows, [[figure_a], [figure_b]], NearDuplicates())
    assert len(kept) == 2
    kept, _, _ = remove_near_duplicates(rows, [[figure_a], [figure_a ^ 0b11]], NearDuplicates())
    assert len(kept) == 1
    siblings = [row("p_0", text, problem="p"), row("p_1", text, problem="p")]
    assert len(remove_near_duplicates(siblings, [[], []], NearDuplicates())[0]) == 2


def test_gram_hashes_are_stable():
    assert gram_hashes(["甲乙丙"]).tolist() == gram_hashes(["甲乙丙"]).tolist()


# --- the stem decides, options aside -------------------------------------------------------------

STEM = "[IMAGE_1]如图，在三角形 ABC 中，M 是 BC 的中点。若 $AB=AC$，则 $AM$ 与 $BC$ 的关系是（ ）"
SCANNED = "[IMAGE_1]如图，在三角形ABC中，M是BC的中点，AB=AC，则AM与BC的关系是（ ）"
THIRTEEN = ["垂直", "平行", "相等", "重合", "相交但不垂直", "AM = 2BC", "BC = 2AM", "无法确定",
            "互为倒数", "夹角为 60°", "夹角为 45°", "AM 平分 BC 但不垂直", "以上都不对"]  # fmt: skip
FOUR = ["垂直", "平行", "相等", "无法确定"]
FIGURE = 0xA2F506DF885DC459


def test_the_same_stem_and_figure_with_other_options_is_one_question():
    """The release lists thirteen options, the scanned page four: full texts are far apart
    (Jaccard < 0.6), stems are not, the figures are 8 bits apart and both answers say 垂直."""
    release = row("dxgs_0_0", STEM, kind="release", options=THIRTEEN)
    scan = row("czsx_scan-p1-clean-q1_0", SCANNED, options=FOUR, quality=0.5)
    kept, removed, summary = remove_near_duplicates(
        [release, scan], [[FIGURE], [FIGURE ^ 0xFF]], NearDuplicates()
    )
    assert [r["question_id"] for r in kept] == ["dxgs_0_0"] and summary["pairs"] == 1
    evidence = json.loads(removed[0]["decisions"][-1]["evidence"])
    assert evidence["rule"] == "stem" and evidence["jaccard"] < 0.6 <= evidence["stem_jaccard"]
    assert evidence["kept_because"] == "release copy preferred to a scan copy"
    assert evidence["image_bits"] == 8

    # another answer is another question; so is another figure
    other_answer = {**scan, "answer": "B"}  # 平行
    assert len(remove_near_duplicates([release, other_answer], [[FIGURE]] * 2,
                                      NearDuplicates())[0]) == 2  # fmt: skip
    assert len(remove_near_duplicates([release, scan], [[FIGURE], [~FIGURE & (2**64 - 1)]],
                                      NearDuplicates())[0]) == 2  # fmt: skip


def test_a_bare_stem_is_no_evidence():
    """ "Which is right?" over different options, both answering "A. 正确的说法": the stems are
    equal but too short to say the questions are one."""
    a = row(
        "a_0", "下列说法正确的是（ ）", options=["正确的说法", "水是冷的", "火是热的", "天是蓝的"]
    )
    b = row(
        "b_0", "下列说法正确的是（ ）", options=["正确的说法", "一加一等于三", "猫会飞", "鱼会走"]
    )
    assert len(remove_near_duplicates([a, b], [[], []], NearDuplicates())[0]) == 2
    assert len(remove_near_duplicates([a, b], [[], []],
                                      NearDuplicates(min_stem_chars=4))[0]) == 1  # fmt: skip


def test_the_clean_scan_is_kept_over_degraded_copies_of_its_page():
    variants = {"blurred": 0.006, "clean": 0.559, "noisy": 0.351, "rotated": 0.42}
    rows = [row(f"czsx_scan-p1-{name}-q1_0", SCANNED, options=FOUR, quality=quality)
            for name, quality in variants.items()]  # fmt: skip
    kept, removed, _ = remove_near_duplicates(rows, [[FIGURE]] * 4, NearDuplicates())
    assert [r["question_id"] for r in kept] == ["czsx_scan-p1-clean-q1_0"]
    for r in removed:
        evidence = json.loads(r["decisions"][-1]["evidence"])
        assert evidence["kept"] == "czsx_scan-p1-clean-q1_0"
        assert evidence["kept_because"].startswith("cleaner scan (page quality 0.559 against")
    # an HTML copy of the page beats every scan: its text was never OCR'd
    html = row("czsx_html-q1_0", SCANNED, kind="html", options=FOUR)
    kept, removed, _ = remove_near_duplicates([*rows, html], [[FIGURE]] * 5, NearDuplicates())
    assert [r["question_id"] for r in kept] == ["czsx_html-q1_0"]
    assert {json.loads(r["decisions"][-1]["evidence"])["kept_because"] for r in removed} == {
        "html copy preferred to a scan copy"
    }


def test_the_sample_build_keeps_the_release_or_the_clean_scan_of_each_question(sample_project):
    """What `dvc repro` built: the release question dxgs_0_0 and its scanned page are one
    question (options differ), and a question found only on scans keeps its clean page."""
    removed = sample_project / "data" / "multi" / "plan" / "removed.jsonl"
    near = {}
    for line in removed.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        for decision in record["decisions"]:
            if decision["reason"] == "NEAR_DUPLICATE":
                near[record["question_id"]] = json.loads(decision["evidence"])
    for variant in ("clean", "blurred", "noisy", "rotated"):
        evidence = near[f"czsx_scan-page001-{variant}-q1_0"]
        assert evidence["kept"] == "dxgs_0_0"
        assert evidence["kept_because"] == "release copy preferred to a scan copy"
    kept_scans = {e["kept"] for e in near.values() if "_scan-" in e["kept"]}
    assert kept_scans and all("-clean-" in kept for kept in kept_scans), kept_scans
    assert not any("-clean-" in qid for qid, e in near.items() if "_scan-" in e["kept"])
