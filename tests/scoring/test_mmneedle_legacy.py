"""Per-sample verdicts of ``--strict`` (the original evaluate.py / evaluate_multi.py rules).

Each row was worked out by hand from the original's string rules; the same 400-sample table was
also checked against the original scripts run outside the project (0 differences).
"""

from __future__ import annotations

import pytest

from benchsmith.scoring.mmneedle import GoldSample
from benchsmith.scoring.mmneedle_legacy import judge_legacy, legacy_ground_truth

POS_K1 = GoldSample(0, True, ((3, 1, 2),), "3, 1, 2", 10, 2)
NEG_K1 = GoldSample(5000, False, (None,), "-1", 10, 2)
POS_K2 = GoldSample(1, True, ((1, 2, 1), (1, 1, 2)), "1, 2, 1; 1, 1, 2", 1, 2)
NEG_K2 = GoldSample(5001, False, (None, None), "-1; -1", 1, 2)
MIXED_K5 = GoldSample(2, True, ((1, 1, 1), (1, 1, 2), (1, 2, 1), (1, 2, 2), None), "", 1, 2)

# (gold, response, existence, index, exact)
CASES = [
    (POS_K1, "3, 1, 2", True, True, True),
    (POS_K1, "3, 1, 2.\n", True, True, True),  # newline deleted, dots stripped
    (POS_K1, "3,1,2", True, False, False),  # "3,1,2".split(", ")[0] is the whole string
    (POS_K1, "Answer: 3, 1, 2", True, False, False),
    (POS_K1, "3, 2, 2", True, True, False),
    (POS_K1, "garbage", True, False, False),  # anything but "-1" says the needle exists
    (POS_K1, "-1", False, False, False),
    (NEG_K1, "-1", True, False, True),  # gold index is "0": a correct "-1" has index 0
    (NEG_K1, "0, 0, 0", False, True, False),  # ... and "0, 0, 0" has index 1
    (NEG_K1, "-1; -1", False, False, False),  # K=1 accepts only "-1"
    (POS_K2, "1, 2, 1; 1, 1, 2", True, True, True),
    (POS_K2, "1, 2, 1;1, 1, 2", True, False, False),  # no space: one part
    (POS_K2, "1, 2, 1", True, False, False),  # index lists differ in length
    (POS_K2, "-1, -1", False, False, False),  # an absent form
    (NEG_K2, "-1; -1", True, False, False),  # exact only against "-1"
    (NEG_K2, "-1", True, False, True),
    (NEG_K2, "-1-1", True, False, False),
    (NEG_K2, "0, 0, 0; 0, 0, 0", False, True, False),
    (MIXED_K5, "1, 1, 1; 1, 1, 2; 1, 2, 1; 1, 2, 2; -1", True, False, False),
    (MIXED_K5, "1, 1, 1; 1, 1, 2; 1, 2, 1; 1, 2, 2; 0, 0, 0", True, True, True),
]


@pytest.mark.parametrize(("gold", "response", "existence", "index", "exact"), CASES)
def test_verdicts(gold, response, existence, index, exact) -> None:
    verdict = judge_legacy(gold, response)
    assert (verdict.existence, verdict.index, verdict.exact) == (existence, index, exact)


def test_ground_truth_uses_zeros_for_absent_needles() -> None:
    assert legacy_ground_truth(MIXED_K5) == "1, 1, 1; 1, 1, 2; 1, 2, 1; 1, 2, 2; 0, 0, 0"
    assert legacy_ground_truth(NEG_K2) == "0, 0, 0; 0, 0, 0"


def test_first_and_all_needles() -> None:
    verdict = judge_legacy(POS_K2, "1, 2, 1; 2, 1, 2; 9, 9, 9")
    assert (verdict.first_index, verdict.first_exact) == (True, True)
    assert verdict.all_index == (True, False)  # over min(len(gold), len(pred)) = 2
    assert verdict.all_exact == (True, False)
    short = judge_legacy(POS_K2, "1, 2, 2")
    assert short.all_exact == (False,)  # the needle left out is not counted
