"""Every reply form of the goldens gets the verdict a reader gives it, in the default modes.

The goldens (``goldens/*.jsonl``, written by ``goldens/make_goldens.py``: each form carries the
answer it was made to say) hold, per family, at least 500 replies: MMIU (740) and MULTI (1,053)
with letters in brackets of every width and script, English and Chinese answer cues, chat
prefixes, ``<think>`` blocks, LaTeX wrappers, option texts that contain each other, refusals,
multiple-choice and fill-in-the-blank forms; MMNeedle (512) with locations in brackets, code
fences, labels, full-width digits and words (``image 2, row 1, column 3``), absent needles and
unclear answers; VL-ICL (506) with operator results, counts as digits and words, nonsense labels
and yes/no, each behind the same wrappers, and hedges. A form that scores wrong is named with
its reply, so a regression says which way of answering it broke.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from benchsmith.options.option_letters import extract_letter
from benchsmith.scoring.mmiu_parse import legacy_choice, legacy_correct
from benchsmith.scoring.mmneedle_parse import parse_answer
from benchsmith.scoring.multi_legacy import legacy_score
from benchsmith.scoring.multi_points import score_question
from benchsmith.scoring.vlicl_normalise import matcher

GOLDENS = Path(__file__).parent / "goldens"
CHINESE_TYPES = {"SA": "单选", "MA": "多选", "FB": "填空"}


def goldens(name: str) -> list[dict]:
    lines = (GOLDENS / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def test_the_goldens_are_large_and_cover_both_languages():
    mmiu, multi = goldens("mmiu_replies.jsonl"), goldens("multi_replies.jsonl")
    for name in ("mmiu", "multi", "mmneedle", "vlicl"):
        assert len(goldens(f"{name}_replies.jsonl")) >= 500, name
    for rows in (mmiu, multi):
        assert any("故选" in r["reply"] for r in rows) and any("answer" in r["reply"] for r in rows)
        assert {r["kind"] for r in rows} >= {"answer", "none"}


def test_mmiu_default_reads_every_form():
    wrong = []
    for row in goldens("mmiu_replies.jsonl"):
        letter, step = extract_letter(row["reply"], row["options"])
        if letter != row["expected"] or (row["kind"] == "refusal") != (step == "refusal"):
            wrong.append((row["form"], row["reply"], row["options"], letter, step))
    assert not wrong, wrong[:10]


def test_multi_default_scores_every_form():
    wrong = []
    for row in goldens("multi_replies.jsonl"):
        score = score_question(row["reply"], row["gold"], row["type"], row["options"])
        if (score.points, score.possible) != (row["points"], row["possible"]):
            wrong.append((row["type"], row["form"], row["reply"], row["gold"], score.points))
    assert not wrong, wrong[:10]


def test_mmneedle_default_reads_every_form():
    wrong = []
    for row in goldens("mmneedle_replies.jsonl"):
        parsed = parse_answer(row["reply"], row["needles"])
        said = None if parsed.status != "ok" else [list(n) if n else None for n in parsed.locations]
        if said != row["expected"]:
            wrong.append((row["form"], row["reply"], said, row["expected"]))
    assert not wrong, wrong[:10]


def test_vlicl_default_reads_every_form():
    wrong = [(r["task"], r["form"], r["reply"], r["gold"]) for r in goldens("vlicl_replies.jsonl")
             if matcher(r["task"])(r["reply"], r["gold"]) != r["right"]]  # fmt: skip
    assert not wrong, wrong[:10]


@pytest.mark.parametrize("name", ["mmiu_replies.jsonl", "multi_replies.jsonl"])
def test_the_legacy_modes_differ_only_on_forms_the_originals_cannot_read(name):
    """What the docs' per-form table says: the legacy readers get no clear answer right that
    the default misses, and a form the default reads right is one the legacy reader reads
    right, sends to its judge, or misses (counted per form)."""
    verdicts: Counter[tuple[str, str]] = Counter()
    for row in goldens(name):
        if name.startswith("mmiu"):
            default = extract_letter(row["reply"], row["options"])[0] == row["expected"]
            choice = legacy_choice(row["reply"])
            legacy = ("judge" if choice is None else
                      legacy_correct(choice, row["expected"] or "Z") and row["kind"] == "answer")  # fmt: skip
        else:
            score = score_question(row["reply"], row["gold"], row["type"], row["options"])
            default = score.points == row["points"]
            points, _, _ = legacy_score(row["reply"], row["gold"], CHINESE_TYPES[row["type"]],
                                        "start")  # fmt: skip
            legacy = points == row["points"]
        verdicts[(str(default), str(legacy))] += 1
    assert verdicts[("False", "True")] == 0, verdicts
    assert verdicts[("True", "True")] > 0 and sum(verdicts.values()) >= 500
