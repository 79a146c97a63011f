"""Blind baselines: answer prior (leave-one-out) and option shortcut rules, against chance."""

from __future__ import annotations

import math
import string

import numpy as np
import pytest

from benchsmith.core.errors import SourceError
from benchsmith.options.blind_rules import (
    BlindItem,
    answer_prior,
    flagged_rules,
    longest_option,
    max_question_overlap,
    resolve_answer_index,
    run_blind_baselines,
    shortcut_hits,
    shortest_option,
    unique_file_type,
    unique_format,
    unique_precision,
)


def mcq(choices, answer, sample_id="s", question="Which one?", answer_index=None):
    return BlindItem(sample_id, question, answer, list(choices), answer_index)


def by_name(results):
    return {r.name: r for r in results}


@pytest.mark.parametrize(
    ("answer", "choices", "expected"),
    [
        ("B", ["cat", "dog", "cow"], 1),
        ("(c)", ["cat", "dog", "cow"], 2),
        ("A.", ["cat", "dog"], 0),
        (2, ["cat", "dog", "cow"], 2),
        ("  Dog ", ["cat", "dog", "cow"], 1),
        ("B", ["B", "A"], 0),  # an option that is itself "B" wins over the letter
        ("3", ["1", "2", "3"], 2),  # digit strings are option text, not indexes
        ("E", ["cat", "dog"], None),
        (5, ["cat", "dog"], None),
        ("horse", ["cat", "dog"], None),
        (True, ["cat", "dog"], None),
    ],
)
def test_resolve_answer_index(answer, choices, expected):
    assert resolve_answer_index(answer, choices) == expected


def test_leave_one_out_prior_does_not_credit_unique_answers():
    """Every answer distinct: an in-sample prior would score 1/n, leave-one-out scores 0."""
    items = [BlindItem(f"s{i}", "q", f"answer {i}", None, None) for i in range(10)]
    result = answer_prior(items)
    assert result.name == "answer_prior_open"
    assert result.accuracy == 0.0 and result.chance == pytest.approx(0.1)
    assert not result.flagged


def test_skewed_yes_no_config_is_flagged():
    items = [BlindItem(f"y{i}", "q", "Yes", None, None) for i in range(7)]
    items += [BlindItem(f"n{i}", "q", "no ", None, None) for i in range(3)]
    result = answer_prior(items, "yes_no")
    # yes items: the others hold 6 yes / 3 no -> "yes", right; no items: 7 / 2 -> "yes", wrong
    assert result.name == "answer_prior_open[yes_no]"
    assert result.accuracy == pytest.approx(0.7) and result.chance == pytest.approx(0.5)
    assert result.lift == pytest.approx(0.2) and result.flagged
    assert result.stderr == pytest.approx(math.sqrt(0.7 * 0.3 / 10))


def test_mcq_position_prior_against_chance():
    items = [mcq(["w", "x", "y", "z"], "A", f"a{i}") for i in range(12)]
    items += [mcq(["w", "x", "y", "z"], "C", f"c{i}") for i in range(4)]
    result = answer_prior(items)
    assert result.accuracy == pytest.approx(12 / 16) and result.chance == pytest.approx(0.25)
    assert result.flagged


def test_answer_prior_rejects_mixed_items():
    with pytest.raises(ValueError, match="all-MCQ or all-open"):
        answer_prior([mcq(["a", "b"], "A"), BlindItem("o", "q", "x", None, None)])


@pytest.mark.parametrize(
    ("rule", "choices", "expected"),
    [
        (longest_option, ["cat", "hippopotamus", "dog", "eel"], 1),
        (longest_option, ["cat", "dog", "eel"], None),
        (shortest_option, ["giraffe", "ox", "zebra", "horse"], 1),
        (shortest_option, ["ox", "ox", "zebra"], None),
        (unique_format, ["12", "apple", "pear", "fig"], 0),
        (unique_format, ["12", "13", "apple", "pear"], None),
        (unique_format, ["A4", "red", "blue", "green"], 0),
        (unique_format, ["cat", "dog"], None),
        (unique_precision, ["1.5", "2.25", "3.5", "4.5"], 1),
        (unique_precision, ["1.5", "2.25", "3.125", "4.5"], None),
        (unique_precision, ["1,000.5", "2.5", "7", "3.5"], 2),
        (unique_precision, ["1.5", "two", "3.5", "4.25"], None),
        (unique_file_type, ["a.png", "b.png", "c.jpg", "d.png"], 2),
        (unique_file_type, ["a.jpg", "b.JPEG", "c.png"], 2),
        (unique_file_type, ["a.png", "b.png", "3.14"], None),
        (unique_file_type, ["a.png", "b.jpg", "c.gif"], None),
    ],
)
def test_option_rules(rule, choices, expected):
    assert rule(mcq(choices, "A")) == expected


def test_max_question_overlap():
    question = "Which animal sleeps on the red sofa?"
    assert (
        max_question_overlap(mcq(["a cat on a red sofa", "dog", "bird"], "A", question=question))
        == 0
    )
    assert max_question_overlap(mcq(["red cat", "red dog", "bird"], "A", question=question)) is None
    assert max_question_overlap(mcq(["cat", "dog", "the bird"], "A", question=question)) is None


def test_rule_accuracy_counts_non_firing_items_at_chance():
    fires = [mcq(["a", "b", "ccccc", "d"], "C", f"f{i}") for i in range(5)]
    silent = [mcq(["aa", "bb", "cc", "dd"], "A", f"s{i}") for i in range(5)]
    result = by_name(run_blind_baselines(fires + silent))["longest_option"]
    assert result.coverage == pytest.approx(0.5)
    assert result.accuracy == pytest.approx((5 + 5 * 0.25) / 10)
    assert result.chance == pytest.approx(0.25)
    assert result.flagged  # lift 0.375 > 0.1


def _balanced_items(n: int, seed: int) -> list[BlindItem]:
    rng = np.random.default_rng(seed)
    letters = np.array(list(string.ascii_lowercase))
    items = []
    for i in range(n):
        choices = ["".join(rng.choice(letters, size=rng.integers(3, 9))) for _ in range(4)]
        answer = int(rng.integers(4))
        question = f"is it {choices[int(rng.integers(4))]} or not"  # names a random option
        items.append(mcq(choices, "ABCD"[answer], f"r{i}", question=question))
    return items


def test_a_config_without_shortcuts_is_not_flagged():
    results = run_blind_baselines(_balanced_items(600, seed=3), threshold=0.1)
    assert [r.name for r in results][:2] == ["answer_prior", "longest_option"]
    for result in results:
        assert result.n == 600 and abs(result.lift) < 0.1, result
        assert not result.flagged
    assert by_name(results)["max_question_overlap"].coverage > 0.9
    assert flagged_rules(results) == []


def test_a_longest_answer_config_is_flagged_and_its_samples_found():
    items = _balanced_items(200, seed=4)
    cheat = [
        mcq(["x", "yy", "a much longer right answer", "zz"], "C", f"cheat{i}") for i in range(200)
    ]
    results = run_blind_baselines(items + cheat)
    assert "longest_option" in flagged_rules(results)
    hits = shortcut_hits(items + cheat, flagged_rules(results))
    assert all(f"cheat{i}" in hits for i in range(200))
    assert hits["cheat0"] == ["longest_option", "odd_signature"]  # words among single words


def test_shortcut_hits_lists_every_rule_that_picks_the_correct_option():
    item = mcq(["photo.jpg", "photo.png", "photo.png", "photo.png"], "A", "x")
    assert shortcut_hits([item]) == {"x": ["unique_file_type", "odd_signature"]}
    wrong = mcq(["photo.jpg", "photo.png", "photo.png", "photo.png"], "B", "y")
    assert shortcut_hits([wrong]) == {}


def test_shortcut_hits_rejects_unknown_rules():
    with pytest.raises(ValueError, match="answer_prior is not per-sample"):
        shortcut_hits([mcq(["a", "b"], "A")], ["answer_prior"])


def test_open_ended_configs_get_only_the_answer_prior():
    items = [BlindItem(f"s{i}", "q", ["yes", "no"][i % 2], None, None) for i in range(20)]
    results = run_blind_baselines(items)
    assert [r.name for r in results] == ["answer_prior_open"]
    assert not results[0].flagged


def test_answer_index_field_wins_and_bad_answers_name_the_sample():
    item = mcq(["cat", "dog", "horse"], "not an option", "s1", answer_index=2)
    assert shortcut_hits([item], ["longest_option"]) == {"s1": ["longest_option"]}
    bad = mcq(["cat", "dog"], "horse", "sample-17")
    with pytest.raises(SourceError, match="sample-17"):
        run_blind_baselines([bad])


def test_cross_item_baselines_find_a_recurring_gold_and_a_learnable_signal():
    """Curation's blind baselines look across samples too: a gold that recurs in other samples
    while distractors are fresh, and golds with fewer decimals (a signal no single-sample rule
    here reads as one option standing out), both beat chance; fair options do not."""
    import numpy as np

    from benchsmith.options.blind_rules import BlindItem, run_blind_baselines

    rng = np.random.default_rng(0)

    def config(recurring: bool, rounder: bool) -> list[BlindItem]:
        items = []
        for k in range(200):
            gold = int(rng.integers(4))
            options = [f"{v:.2f} m" for v in rng.uniform(0, 9, 4)]
            if recurring:
                options[gold] = f"{k % 5}.25 m"  # one of five answers, over and over
            if rounder:
                options[gold] = f"{rng.uniform(0, 9):.1f}0 m"
            items.append(BlindItem(f"s{k}", "How far?", options[gold], options, gold))
        return items

    def lifts(items: list[BlindItem]) -> dict[str, float]:
        return {r.name: r.lift for r in run_blind_baselines(items)}

    recurring = lifts(config(recurring=True, rounder=False))
    assert recurring["recurring_option"] > 0.5 and recurring["learned_options_only"] > 0.5
    rounder = lifts(config(recurring=False, rounder=True))
    assert rounder["learned_options_only"] > 0.3
    fair = lifts(config(recurring=False, rounder=False))
    assert max(fair[n] for n in ("recurring_option", "rare_option", "learned_options_only")) < 0.1
