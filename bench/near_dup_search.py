"""Near-duplicate search: multi-index hashing against all-pairs NumPy, in one run.

Why: leakage checks compare perceptual hashes (64-bit pHash) of every image with every other
(within a split) or with another split. All pairs is O(n^2): 2e10 pairs for 200,000 images.
``benchsmith.images.near_duplicates.find_near_duplicate_pairs`` splits the bits into chunks
and only compares hashes that agree exactly on some key of chunks (pigeonhole), so it should
be far faster while finding exactly the same pairs. This script checks both claims:

* **ours**: ``find_near_duplicate_pairs(hashes, threshold)`` on all ``--n`` hashes (default
  200,000), wall time, fastest of ``--repeat`` runs.
* **baseline**: ``all_pairs_baseline`` (block-wise NumPy xor + ``bitwise_count`` over every
  pair) on the first ``--subset`` hashes (default 20,000), run once. Its time is extrapolated
  to ``--n`` by the pair count, ``n (n - 1) / 2``: the baseline does the same work per pair
  whatever n is (``--full-baseline`` runs it on all ``--n`` hashes instead, ~1 min).
  ``speedup = baseline_time(n) / ours_time(n)``, target >= 50x.

The hashes are uniformly random with planted pairs: ``--pairs`` (default 1,000) pairs set
1..threshold bits apart (each distance equally often; a tenth of them inside the subset), and
200 decoy pairs exactly threshold + 1 bits apart. Checks: recall on the planted pairs (target
1.0), no decoy reported, and ours on the subset equal to the baseline on the subset (pair for
pair, with distances: target 0 missing and 0 extra); with ``--full-baseline`` the same on all
hashes.

Threshold: 8 of 64 bits by default (``DEFAULT_PHASH_THRESHOLD``). cleanvision calls images
near duplicates when their 64-bit pHashes are *equal*; a lossy re-encode or resize can flip a
few bits, and two unrelated images fall within 8 bits with probability ~2.5e-10 per pair for
uniform hashes (~5 chance pairs among 200,000). It is also the hard case for the index: the
larger the threshold, the shorter the keys.

Run ``python bench/near_dup_search.py`` (about 10 s; ``--quick``: 50,000 hashes, 2 s).
Results go to ``bench/results/near_dup_search.json``.
"""

from __future__ import annotations

import argparse
import math
import resource
import sys
import time
import tracemalloc
from typing import Any

import numpy as np
from synthetic_coco import machine_info, mark, print_table, write_result

from benchsmith.images.duplicates import DEFAULT_PHASH_THRESHOLD
from benchsmith.images.near_duplicates import (
    PairMatches,
    all_pairs_baseline,
    find_near_duplicate_pairs,
    plan_layout,
)

NAME = "near_dup_search"
SPEEDUP_TARGET = 50.0
DECOYS = 200


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def flip_bits(value: int, distance: int, rng: np.random.Generator) -> int:
    for bit in rng.choice(64, size=distance, replace=False):
        value ^= 1 << int(bit)
    return value


def make_hashes(
    n: int, pairs: int, subset: int, threshold: int, seed: int
) -> tuple[np.ndarray, list[tuple[int, int, int]], list[tuple[int, int]]]:
    """Random hashes, planted pairs ``(i, j, distance)`` and decoys ``(i, j)`` at threshold+1."""
    rng = np.random.default_rng(seed)
    hashes = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    inside = max(pairs // 10, 1)
    slots_in = rng.permutation(subset)[: 2 * inside]
    slots_out = subset + rng.permutation(n - subset)[: 2 * (pairs - inside + DECOYS)]
    slots = np.concatenate([slots_in, slots_out]).reshape(-1, 2).tolist()
    planted, decoys = [], []
    for k, (i, j) in enumerate(slots):
        distance = 1 + k % threshold if k < pairs else threshold + 1
        hashes[j] = flip_bits(int(hashes[i]), distance, rng)
        pair = (min(i, j), max(i, j))
        if k < pairs:
            planted.append((*pair, distance))
        else:
            decoys.append(pair)
    return hashes, planted, decoys


def best_time(fn, repeat: int) -> tuple[float, Any]:
    best, result = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def compare(ours: PairMatches, baseline: PairMatches) -> dict[str, int]:
    a, b = ours.as_set(), baseline.as_set()
    return {"ours": len(a), "baseline": len(b), "missing": len(b - a), "extra": len(a - b)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000, help="hashes searched by ours")
    parser.add_argument("--subset", type=int, default=20_000, help="hashes for the baseline")
    parser.add_argument("--pairs", type=int, default=1_000, help="planted near-duplicate pairs")
    parser.add_argument("--threshold", type=int, default=DEFAULT_PHASH_THRESHOLD)
    parser.add_argument("--repeat", type=int, default=3, help="runs of ours; fastest counts")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="50,000 hashes, subset 10,000")
    parser.add_argument(
        "--full-baseline", action="store_true", help="run the baseline on all --n hashes too"
    )
    args = parser.parse_args(argv)
    if args.quick:
        args.n, args.subset, args.pairs = 50_000, 10_000, 500
    n, subset, threshold = args.n, args.subset, args.threshold
    hashes, planted, decoys = make_hashes(n, args.pairs, subset, threshold, args.seed)
    layout = plan_layout(n, None, threshold)
    print(
        f"near-duplicate search: {n:,} hashes, threshold {threshold}, {len(planted)} planted "
        f"pairs, {len(decoys)} decoys at {threshold + 1}; layout: {len(layout.chunk_masks)} "
        f"chunks, keys of {layout.chunks_per_key} ({layout.n_keys} keys)"
    )

    # ours on everything: timing, then one traced run for the memory it allocates
    find_near_duplicate_pairs(hashes[:1000], threshold)  # warm-up (imports, caches)
    ours_time, ours = best_time(lambda: find_near_duplicate_pairs(hashes, threshold), args.repeat)
    tracemalloc.start()
    find_near_duplicate_pairs(hashes, threshold)
    ours_traced_peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    rss_after_ours = peak_rss_mib()
    found = {(i, j): d for i, j, d in ours.as_set()}
    recall = sum(found.get((i, j)) == d for i, j, d in planted) / len(planted)
    decoys_reported = sum(pair in found for pair in decoys)

    # both on the subset: equality, and the baseline's cost per pair
    sub = hashes[:subset]
    ours_sub_time, ours_sub = best_time(
        lambda: find_near_duplicate_pairs(sub, threshold), args.repeat
    )
    base_sub_time, base_sub = best_time(lambda: all_pairs_baseline(sub, threshold), 1)
    subset_check = compare(ours_sub, base_sub)
    pair_ratio = (n * (n - 1)) / (subset * (subset - 1))
    base_time = base_sub_time * pair_ratio
    full_check = None
    if args.full_baseline:
        base_time, base_full = best_time(lambda: all_pairs_baseline(hashes, threshold), 1)
        full_check = compare(ours, base_full)
    speedup = base_time / ours_time
    checks_ok = (
        recall == 1.0
        and decoys_reported == 0
        and subset_check["missing"] == subset_check["extra"] == 0
        and (full_check is None or full_check["missing"] == full_check["extra"] == 0)
    )

    basis = "measured" if args.full_baseline else f"extrapolated x{pair_ratio:.1f} from {subset:,}"
    print()
    print_table(
        ["run", "hashes", "time s", "pairs found", "note"],
        [
            ["ours", f"{n:,}", f"{ours_time:.3f}", len(ours), f"best of {args.repeat}"],
            ["ours", f"{subset:,}", f"{ours_sub_time:.4f}", len(ours_sub), "subset"],
            ["baseline", f"{subset:,}", f"{base_sub_time:.3f}", len(base_sub), "subset"],
            [
                "baseline",
                f"{n:,}",
                f"{base_time:.1f}",
                len(base_full) if args.full_baseline else "-",
                basis,
            ],
        ],
    )
    print()
    print_table(
        ["check", "value", "target", ""],
        [
            ["speedup at n", f"{speedup:.0f}x", f">= {SPEEDUP_TARGET:.0f}x", mark(speedup >= 50)],
            ["recall on planted", f"{recall:.3f}", "1.0", mark(recall == 1.0)],
            ["decoys reported", decoys_reported, "0", mark(decoys_reported == 0)],
            [
                "subset vs baseline (missing/extra)",
                f"{subset_check['missing']}/{subset_check['extra']}",
                "0/0",
                mark(subset_check["missing"] == subset_check["extra"] == 0),
            ],
            *(
                [
                    [
                        "full vs baseline (missing/extra)",
                        f"{full_check['missing']}/{full_check['extra']}",
                        "0/0",
                        mark(full_check["missing"] == full_check["extra"] == 0),
                    ]
                ]
                if full_check
                else []
            ),
            ["ours traced peak MiB", f"{ours_traced_peak:.1f}", "", ""],
            [
                "peak RSS MiB after ours / after all",
                f"{rss_after_ours:.0f} / {peak_rss_mib():.0f}",
                "",
                "",
            ],
        ],
    )
    path = write_result(
        NAME,
        {
            "benchmark": NAME,
            "quick": args.quick,
            "n": n,
            "subset": subset,
            "threshold": threshold,
            "planted_pairs": len(planted),
            "decoys": len(decoys),
            "seed": args.seed,
            "repeat": args.repeat,
            "layout": {
                "chunks": len(layout.chunk_masks),
                "chunks_per_key": layout.chunks_per_key,
                "keys": layout.n_keys,
            },
            "ours_s": ours_time,
            "ours_subset_s": ours_sub_time,
            "baseline_subset_s": base_sub_time,
            "baseline_s": base_time,
            "baseline_basis": "measured" if args.full_baseline else "extrapolated_by_pair_count",
            "speedup": speedup,
            "pairs_found": len(ours),
            "chance_pairs": len(ours) - int(recall * len(planted)),
            "recall_planted": recall,
            "decoys_reported": decoys_reported,
            "subset_check": subset_check,
            "full_check": full_check,
            "ours_traced_peak_mib": ours_traced_peak,
            "peak_rss_mib_after_ours": rss_after_ours,
            "peak_rss_mib_after_all": peak_rss_mib(),
            "targets": {"speedup_min": SPEEDUP_TARGET, "recall": 1.0, "subset_diff": 0},
            "pass": bool(checks_ok and speedup >= SPEEDUP_TARGET),
            "machine": machine_info(),
        },
    )
    print(f"\nwrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
