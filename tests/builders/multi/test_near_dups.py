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
from benchsmith.stages.ngram_index import gram_hashes

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


def brute_force(texts, settings):
    """Every pair compared by exact Jaccard."""
    sets = gram_sets(texts, settings.ngram)
    return {(i, j) for i in range(len(texts)) for j in range(i + 1, len(texts))
            if jaccard(sets[i], sets[j]) >= settings.min_jaccard}  # fmt: skip


def test_the_index_finds_what_comparing_every_pair_finds():
    settings = NearDuplicates()
    texts = synthetic_texts(600, seed=3)
    groups = [str(k) for k in range(len(texts))]
    found, candidates = find_duplicate_pairs(texts, groups, [[]] * len(texts), settings)
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


def row(qid: str, text: str, kind: str = "scan", problem: str | None = None, answer="A"):
    return {"question_id": qid, "problem_id": problem or qid, "text": text, "options": None,
            "source_kind": kind, "answer": answer, "analysis": "", "decisions": []}  # fmt: skip


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
