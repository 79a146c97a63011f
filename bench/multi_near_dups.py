"""MULTI near-duplicate search: exact prefix filtering, MinHash LSH and the exact sparse
all-pairs product, each measured (never extrapolated) at every size, in one run.

Why: MULTI's build removes near-duplicate questions across the whole pool (release, crawled
pages, scans). The default route (``multi.near_duplicates.candidates: exact``,
``benchsmith/builders/multi/exact_pairs.py``) must find *every* pair at Jaccard >= 0.6 (recall
1.0) and be no slower than the fastest exact baseline we know at any measured size:

* **exact (ours, default)**: ``find_duplicate_pairs`` with prefix-filter candidates;
* **lsh**: the same with ``candidates: lsh`` (128 MinHash hashes, 32 bands of 4);
* **baseline**: exact Jaccard of every pair as one sparse incidence product (question x gram
  times its transpose, scipy, row blocks of ``--block`` questions to bound memory), then
  ``>= 0.6``.

Each (method, size) runs in a fresh child process, so its peak RSS (``VmHWM``) is its own; the
timings include gram hashing. The texts look like exam questions: shared stems ("下列说法正确的
是", "已知函数"), formulas, option lists "A. ... D. ...", random content of common CJK
characters, 20-200 characters, with ``--pairs`` planted near duplicates per 100,000 (a copy with
characters replaced, a sentence added, or options reordered). Checks: every method's pairs
against the baseline's where both ran (missing / extra), recall on the planted pairs at >= 0.6.

Run ``python bench/multi_near_dups.py`` (10,000, 100,000 and 1,000,000 questions; the baseline
up to ``--baseline-max``, default 100,000: at 1M it takes tens of minutes), or ``--quick``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from synthetic_coco import machine_info, own_peak_rss_bytes, print_table, write_result

NAME = "multi_near_dups"
CHARS = [chr(c) for c in range(0x4E00, 0x4E00 + 2500)]
STEMS = ("下列说法正确的是", "下列说法错误的是", "已知函数f(x)=", "如图所示，", "根据材料回答问题：",
         "求下列各式的值：", "关于该实验，下列叙述正确的是", "计算：")  # fmt: skip
FORMULAS = ("x^2+y^2=1", "sin(x)+cos(x)", "f(x)=2x+1", "a_n=2^n", "\\frac{1}{2}", "v=at", "F=ma")


def exam_questions(n: int, pairs: int, seed: int) -> tuple[list[str], list[tuple[int, int]]]:
    """``n`` exam-like texts and the planted near-duplicate pairs (i < j)."""
    rng = np.random.default_rng(seed)
    texts = []
    for _ in range(n):
        body = "".join(rng.choice(CHARS, size=int(rng.integers(10, 120))))
        formula = str(rng.choice(FORMULAS)) if rng.random() < 0.4 else ""
        options = "".join(f"{letter}. {''.join(rng.choice(CHARS, size=int(rng.integers(2, 9))))} "
                          for letter in "ABCD") if rng.random() < 0.6 else ""  # fmt: skip
        texts.append(str(rng.choice(STEMS)) + body + formula + options)
    planted = []
    targets = rng.choice(n, size=2 * pairs, replace=False)
    for k in range(pairs):
        source, copy = int(targets[2 * k]), int(targets[2 * k + 1])
        chars = list(texts[source])
        if k % 3 == 0:
            for position in rng.choice(len(chars), size=int(rng.integers(1, 7)), replace=False):
                chars[int(position)] = str(rng.choice(CHARS))
        elif k % 3 == 1:
            chars += list(rng.choice(CHARS, size=int(rng.integers(3, 15))))
        else:
            chars = chars[::-1][: len(chars) // 3][::-1] + chars[: len(chars) - len(chars) // 3]
        texts[copy] = "".join(chars)
        planted.append((min(source, copy), max(source, copy)))
    return texts, planted


def run_ours(texts: list[str], candidates: str) -> tuple[set[tuple[int, int]], int]:
    from benchsmith.builders.multi.config import NearDuplicates
    from benchsmith.builders.multi.near_dups import find_duplicate_pairs

    rows = [{"text": t, "question_content": t, "problem_content": "", "options": None,
             "problem_id": str(k), "answer": ""} for k, t in enumerate(texts)]  # fmt: skip
    found, checked = find_duplicate_pairs(
        rows, [[]] * len(rows), NearDuplicates(candidates=candidates)
    )
    return {(p.left, p.right) for p in found}, checked


def run_baseline(texts: list[str], block: int) -> tuple[set[tuple[int, int]], int]:
    """Every pair's Jaccard from the sparse incidence product, ``block`` rows at a time."""
    from scipy import sparse

    from benchsmith.builders.multi.near_dups import gram_sets

    sets = gram_sets(texts, 3)
    vocabulary, columns = np.unique(np.concatenate(sets), return_inverse=True)
    sizes = np.array([len(s) for s in sets])
    rows = np.repeat(np.arange(len(sets)), sizes)
    incidence = sparse.csr_matrix((np.ones(rows.size, dtype=np.int32), (rows, columns)),
                                  shape=(len(sets), vocabulary.size))  # fmt: skip
    transposed = incidence.T.tocsc()
    found, products = set(), 0
    for start in range(0, len(sets), block):
        common = (incidence[start : start + block] @ transposed).tocoo()
        products += common.nnz
        i, j = common.row + start, common.col
        upper = i < j
        i, j, data = i[upper], j[upper], common.data[upper]
        keep = data / (sizes[i] + sizes[j] - data) >= 0.6
        found |= set(zip(i[keep].tolist(), j[keep].tolist(), strict=True))
    return found, products


def child(method: str, n: int, pairs: int, block: int, out: Path) -> None:
    texts, planted = exam_questions(n, pairs, seed=0)
    start = time.perf_counter()
    if method == "baseline":
        found, work = run_baseline(texts, block)
    else:
        found, work = run_ours(texts, method)
    seconds = time.perf_counter() - start
    out.write_text(json.dumps({"seconds": seconds, "pairs": sorted(found), "work": work,
                               "peak_mib": own_peak_rss_bytes() / 2**20}))  # fmt: skip


def measure(method: str, n: int, pairs: int, block: int, folder: Path) -> dict:
    out = folder / f"{method}-{n}.json"
    subprocess.run([sys.executable, __file__, "--child", method, str(n), str(pairs), str(block),
                    str(out)], check=True)  # fmt: skip
    return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--baseline-max", type=int, default=100_000)
    parser.add_argument("--pairs-per-100k", type=int, default=2_000)
    parser.add_argument("--block", type=int, default=5_000)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        method, n, pairs, block, out = args.child
        child(method, int(n), int(pairs), int(block), Path(out))
        return
    if args.quick:
        args.scales, args.baseline_max = [10_000, 30_000], 30_000
    import tempfile

    from benchsmith.builders.multi.near_dups import gram_sets, jaccard

    table, result = [], {"machine": machine_info(), "scales": {}}
    with tempfile.TemporaryDirectory() as scratch:
        for n in args.scales:
            pairs = max(10, args.pairs_per_100k * n // 100_000)
            texts, planted = exam_questions(n, pairs, seed=0)
            sets = gram_sets([t for p in planted for t in (texts[p[0]], texts[p[1]])], 3)
            true_planted = {p for k, p in enumerate(planted)
                            if jaccard(sets[2 * k], sets[2 * k + 1]) >= 0.6}  # fmt: skip
            runs = {m: measure(m, n, pairs, args.block, Path(scratch))
                    for m in ("exact", "lsh", "baseline")
                    if m != "baseline" or n <= args.baseline_max}  # fmt: skip
            truth = {tuple(p) for p in runs["baseline"]["pairs"]} if "baseline" in runs else None
            scale = {}
            for method, run in runs.items():
                found = {tuple(p) for p in run["pairs"]}
                scale[method] = {
                    "seconds": round(run["seconds"], 2),
                    "peak_mib": round(run["peak_mib"]),
                    "pairs": len(found),
                    "work": run["work"],
                    "planted_recall": round(
                        len(found & true_planted) / max(1, len(true_planted)), 4
                    ),
                    "missing_vs_baseline": None if truth is None else len(truth - found),
                    "extra_vs_baseline": None if truth is None else len(found - truth),
                }
                table.append([n, method, scale[method]["seconds"], scale[method]["peak_mib"],
                              len(found), scale[method]["planted_recall"],
                              "-" if truth is None else f"{len(truth - found)} / {len(found - truth)}"])  # fmt: skip
            if "baseline" not in runs:
                table.append(
                    [
                        n,
                        "baseline",
                        "not run",
                        "",
                        "",
                        "",
                        f"n > --baseline-max {args.baseline_max}",
                    ]
                )
            result["scales"][n] = scale
    print_table(["questions", "method", "seconds", "peak MiB", "pairs", "planted recall",
                 "missing / extra vs baseline"], table)  # fmt: skip
    print(f"-> {write_result(NAME, result)}")


if __name__ == "__main__":
    main()
