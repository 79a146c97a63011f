"""MULTI near-duplicate search: MinHash LSH against all-pairs Jaccard, in one run.

Why: MULTI's build removes near-duplicate questions across the whole pool (release, crawled
pages, scans). Comparing every pair is O(n^2): 5e9 pairs for 100,000 questions.
``benchsmith.builders.multi.near_dups.find_duplicate_pairs`` finds candidates with MinHash LSH
(128 hashes, 32 bands of 4) and confirms each by exact character-3-gram Jaccard, so it should be
far faster while finding (nearly) the same pairs. This script checks both claims:

* **ours**: ``find_duplicate_pairs`` on all ``--n`` synthetic questions (default 100,000): gram
  hashing, signatures, banding and confirmation, wall time.
* **baseline**: exact Jaccard of *every* pair of the first ``--subset`` questions (default
  4,000; 8e6 pairs) as one sparse matrix product (question x gram incidence times its
  transpose, scipy): the fastest honest all-pairs method we know. Its time is extrapolated to
  ``--n`` by the pair count ``n (n - 1) / 2``; ``speedup = baseline(n) / ours(n)``.

The questions are random strings of common CJK characters (30-120 long), with ``--pairs``
(default 2,000) planted near duplicates (a tenth of them inside the subset): a copy with 1-6
characters replaced, or a sentence added. Checks: recall on the planted pairs whose true Jaccard >= 0.6 (the default
``min_jaccard``), and ours on the subset against the baseline on the subset (pairs at
Jaccard >= 0.6 that ours misses; ours never reports a pair below it, by construction).

Run ``python bench/multi_near_dups.py`` (~1 minute) or ``--quick`` (20,000 questions).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from synthetic_coco import machine_info, print_table, write_result

NAME = "multi_near_dups"
CHARS = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)]


def synthetic_questions(n: int, pairs: int, seed: int, subset: int = 0
                        ) -> tuple[list[str], list[tuple[int, int]]]:  # fmt: skip
    """Random texts with planted near-duplicate pairs, a tenth of them inside ``subset``."""
    rng = np.random.default_rng(seed)
    texts = ["".join(rng.choice(CHARS, size=int(rng.integers(30, 121)))) for _ in range(n)]
    planted = []
    inside = pairs // 10 if subset else 0
    targets = np.concatenate([rng.choice(subset, size=2 * inside, replace=False),
                              subset + rng.choice(n - subset, size=2 * (pairs - inside),
                                                  replace=False)])  # fmt: skip
    for k in range(pairs):
        source, copy = int(targets[2 * k]), int(targets[2 * k + 1])
        chars = list(texts[source])
        if k % 2:
            for position in rng.choice(len(chars), size=int(rng.integers(1, 7)), replace=False):
                chars[int(position)] = str(rng.choice(CHARS))
        else:
            chars += list(rng.choice(CHARS, size=int(rng.integers(3, 12))))
        texts[copy] = "".join(chars)
        planted.append((min(source, copy), max(source, copy)))
    return texts, planted


def all_pairs(texts: list[str], ngram: int, min_jaccard: float) -> set[tuple[int, int]]:
    """Exact Jaccard of every pair via a sparse incidence product."""
    from scipy import sparse

    from benchsmith.builders.multi.near_dups import gram_sets

    sets = gram_sets(texts, ngram)
    vocabulary, columns = np.unique(np.concatenate(sets), return_inverse=True)
    rows = np.repeat(np.arange(len(sets)), [len(s) for s in sets])
    incidence = sparse.csr_matrix((np.ones(rows.size, dtype=np.int32), (rows, columns)),
                                  shape=(len(sets), vocabulary.size))  # fmt: skip
    common = sparse.triu(incidence @ incidence.T, k=1).tocoo()
    sizes = np.array([len(s) for s in sets])
    jaccard = common.data / (sizes[common.row] + sizes[common.col] - common.data)
    keep = jaccard >= min_jaccard
    return set(zip(common.row[keep].tolist(), common.col[keep].tolist(), strict=True))


def main() -> None:
    from benchsmith.builders.multi.config import NearDuplicates
    from benchsmith.builders.multi.near_dups import find_duplicate_pairs, gram_sets, jaccard

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--subset", type=int, default=4_000)
    parser.add_argument("--pairs", type=int, default=2_000)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.n, args.subset, args.pairs = 20_000, 2_000, 500
    settings = NearDuplicates()
    texts, planted = synthetic_questions(args.n, args.pairs, seed=0, subset=args.subset)
    rows = [{"text": t, "question_content": t, "problem_content": "", "options": None,
             "problem_id": str(k), "answer": ""} for k, t in enumerate(texts)]  # fmt: skip
    no_images = [[]] * len(texts)

    start = time.perf_counter()
    found, candidates = find_duplicate_pairs(rows, no_images, settings)
    ours = time.perf_counter() - start
    pairs = {(p.left, p.right) for p in found}
    sets = gram_sets([t for pair in planted for t in (texts[pair[0]], texts[pair[1]])], 3)
    true_planted = [p for k, p in enumerate(planted)
                    if jaccard(sets[2 * k], sets[2 * k + 1]) >= settings.min_jaccard]  # fmt: skip
    recall = sum(p in pairs for p in true_planted) / max(1, len(true_planted))

    subset = texts[: args.subset]
    start = time.perf_counter()
    truth = all_pairs(subset, settings.ngram, settings.min_jaccard)
    baseline_subset = time.perf_counter() - start
    scale = (args.n * (args.n - 1) / 2) / (args.subset * (args.subset - 1) / 2)
    baseline = baseline_subset * scale
    ours_subset, _ = find_duplicate_pairs(rows[: args.subset], no_images[: args.subset],
                                          settings)  # fmt: skip
    ours_subset_pairs = {(p.left, p.right) for p in ours_subset}
    result = {
        "machine": machine_info(),
        "n": args.n,
        "subset": args.subset,
        "planted_pairs": len(planted),
        "planted_at_min_jaccard": len(true_planted),
        "settings": {
            "ngram": settings.ngram,
            "num_perm": settings.num_perm,
            "bands": settings.bands,
            "min_jaccard": settings.min_jaccard,
        },  # fmt: skip
        "ours_s": round(ours, 3),
        "candidates": candidates,
        "confirmed": len(found),
        "recall_planted": round(recall, 4),
        "baseline_subset_s": round(baseline_subset, 3),
        "baseline_extrapolated_s": round(baseline, 1),
        "speedup": round(baseline / ours, 1),
        "subset_truth_pairs": len(truth),
        "subset_missing": len(truth - ours_subset_pairs),
        "subset_extra": len(ours_subset_pairs - truth),
    }
    print_table(["", "questions", "time s", "pairs"], [
        ["ours (MinHash LSH + Jaccard)", args.n, result["ours_s"], len(found)],
        ["all pairs (sparse product)", args.subset, result["baseline_subset_s"], len(truth)],
        ["all pairs, extrapolated", args.n, result["baseline_extrapolated_s"], ""],
    ])  # fmt: skip
    print(f"speedup {result['speedup']}x; recall on planted pairs {result['recall_planted']}; "
          f"subset: {result['subset_missing']} missing, {result['subset_extra']} extra")  # fmt: skip
    print(f"-> {write_result(NAME, result)}")


if __name__ == "__main__":
    main()
