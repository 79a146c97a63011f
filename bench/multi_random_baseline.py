"""MULTI's seeded random baseline, next to the paper's (24.8 on MULTI, 17.7 on Elite).

Why: the paper reports a random baseline (Table 4: 24.8 overall, SA 30.8, MA 22.5, FB 0.9,
OP 3.4, Elite 17.7) without its seed or exact rules. Ours (``benchsmith.scoring.multi.
random_reply``) follows the paper's description: a uniform SA pick; each MA option kept with
probability 1/2 (at least one); FB a random token per blank from {A-D, 1-4, True, False}; OP the
question echoed. Replies are scored by the default scorer (``score_question``), seeded, so the
number is reproducible; ``--seeds`` repeats it to show its spread.

Pools:

* ``--dataset PUBLISHED`` scores a published MULTI folder (``questions`` and ``elite``): with
  the real release built, this is the number to compare with the paper's;
* by default, a **synthetic pool shaped like the paper's Table 1** (the real release is a 500 MB
  download we do not make in CI): 13,949 SA (9,909 with 4 options, 2,500 true/false, 500 with 3,
  1,040 with 5), 2,143 MA over 4-5 options with 5,954 correct letters in all, 1,439 FB with 2,223
  blanks, 797 OP; and an Elite of 500 SA/MA/FB in the proportions of the authors' bucket rule
  (a quarter MA, a quarter FB, half SA). What it can show is that our baseline's rules give
  numbers of the paper's order on a pool of the paper's shape; not the paper's exact digits.

Run ``python bench/multi_random_baseline.py`` (~20 s).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from synthetic_coco import machine_info, print_table, write_result

NAME = "multi_random_baseline"
PAPER = {"overall": 24.8, "SA": 30.8, "MA": 22.5, "FB": 0.9, "OP": 3.4, "elite": 17.7}
WORDS = [chr(c) for c in range(0x4E00, 0x4E00 + 800)]


def question(kind: str, options: int, answer: str, points: int, text: str) -> dict:
    return {"question_type": kind, "option_texts": [f"选项{k}" for k in range(options)],
            "answer": answer, "points": points, "text": text}  # fmt: skip


def synthetic_pool(rng: np.random.Generator) -> tuple[list[dict], list[dict]]:
    def letters(n: int) -> list[str]:
        return [chr(65 + k) for k in range(n)]

    def sa(options: int) -> dict:
        return question("SA", options, str(rng.choice(letters(options))), 1, "题")

    def ma(options: int, correct: int) -> dict:
        answer = "".join(sorted(rng.choice(letters(options), size=correct, replace=False)))
        return question("MA", options, answer, correct, "题")

    def fb(blanks: int) -> dict:
        answer = "\n".join(str(rng.integers(10, 1000)) for _ in range(blanks))
        return question("FB", 0, answer, blanks, "题")

    def op() -> dict:
        stem = "".join(rng.choice(WORDS, size=30))
        return question("OP", 0, "".join(rng.choice(WORDS, size=60)), 1, stem)

    pool = [sa(4) for _ in range(9_909)] + [sa(2) for _ in range(2_500)]
    pool += [sa(3) for _ in range(500)] + [sa(5) for _ in range(1_040)]
    correct = np.full(2_143, 2)
    correct[: 5_954 - 2 * 2_143] += 1  # 5,954 letters in all: 1,668 with 3, the rest with 2
    pool += [ma(5 if k % 2 else 4, int(c)) for k, c in enumerate(correct)]
    blanks = np.ones(1_439, dtype=int)
    blanks[: 2_223 - 1_439] += 1
    pool += [fb(int(b)) for b in blanks] + [op() for _ in range(797)]
    elite = [sa(4) for _ in range(250)] + [ma(4, 2 + k % 2) for k in range(125)]
    elite += [fb(1 + k % 2) for k in range(125)]
    return pool, elite


def score(rows: list[dict], seed: int) -> dict[str, float]:
    from benchsmith.scoring.multi import random_reply
    from benchsmith.scoring.multi_points import score_question

    rng = np.random.default_rng(seed)
    earned: dict[str, float] = {}
    possible: dict[str, float] = {}
    for row in rows:
        result = score_question(random_reply(row, rng), row["answer"], row["question_type"],
                                row["option_texts"])  # fmt: skip
        for key in ("overall", row["question_type"]):
            earned[key] = earned.get(key, 0.0) + result.points
            possible[key] = possible.get(key, 0.0) + result.possible
    return {k: round(100 * earned[k] / possible[k], 2) for k in earned if possible[k]}


def published_pool(folder: Path) -> tuple[list[dict], list[dict]]:
    from benchsmith.scoring.multi import load_gold

    return load_gold(folder, "questions"), load_gold(folder, "elite")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, help="a published MULTI folder")
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(20241203)  # the pool's own stream, apart from the replies'
    pool, elite = published_pool(args.dataset) if args.dataset else synthetic_pool(rng)
    runs = [(score(pool, s), score(elite, s)) for s in range(args.seeds)]
    rows = []
    for key in ("overall", "SA", "MA", "FB", "OP"):
        values = [r[0].get(key) for r in runs if r[0].get(key) is not None]
        if values:
            rows.append([key, f"{np.mean(values):.1f} ± {np.std(values):.1f}", PAPER[key]])
    elite_values = [r[1]["overall"] for r in runs]
    rows.append(["elite", f"{np.mean(elite_values):.1f} ± {np.std(elite_values):.1f}",
                 PAPER["elite"]])  # fmt: skip
    print_table(["score (%)", f"ours, {args.seeds} seeds", "paper"], rows)
    result = {"machine": machine_info(), "pool": str(args.dataset or "synthetic Table 1 shape"),
              "questions": len(pool), "elite_questions": len(elite),
              "seeds": args.seeds, "runs": [{"questions": a, "elite": b} for a, b in runs],
              "paper": PAPER}  # fmt: skip
    print(f"-> {write_result(NAME, result)}")


if __name__ == "__main__":
    main()
