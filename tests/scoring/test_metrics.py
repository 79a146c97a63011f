"""Per-sample metrics: definitions checked against hand-worked cases and boundaries."""

from __future__ import annotations

import random
import string

import pytest

from benchsmith.core.errors import BenchsmithError
from benchsmith.scoring.metrics import (
    METRICS,
    anls,
    exact_accuracy,
    extract_option_letter,
    get_metric,
    is_correct,
    levenshtein,
    normalize_vqa_answer,
    parse_number,
    prescored_metric,
    relaxed_accuracy,
    substring_accuracy,
    vqa_accuracy,
)


def leave_one_out_reference(prediction: str, answers: list[str]) -> float:
    """The VQA definition, spelled out: mean over i of min(1, matches among others / 3)."""
    values = []
    for i in range(len(answers)):
        others = answers[:i] + answers[i + 1 :]
        values.append(min(1.0, sum(a == prediction for a in others) / 3))
    return sum(values) / len(values)


# ----------------------------------------------------------------------------- exact accuracy


@pytest.mark.parametrize(
    "response",
    ["B", "(B)", "B.", "B) a red ball", "B: a red ball", "The answer is B", "Answer: (B)", "b"],
)
def test_option_letter_forms_score_against_letter_gold(response):
    assert exact_accuracy(response, "B") == 1.0
    assert exact_accuracy(response, "C") == 0.0


@pytest.mark.parametrize("response", ["A cat", "I am not sure", "", "The answer is a dog"])
def test_extractor_never_guesses_a_letter(response):
    assert extract_option_letter(response) is None
    assert exact_accuracy(response, "A") == 0.0


def test_exact_accuracy_normalises_case_space_and_final_period():
    assert exact_accuracy("  Yes. ", "yes") == 1.0
    assert exact_accuracy("no", "yes") == 0.0
    assert exact_accuracy("Paris", ["London", "paris"]) == 1.0
    assert exact_accuracy("yes sir", "yes") == 0.0


def test_substring_accuracy_is_ocrbench_containment():
    assert substring_accuracy("The sign reads STOP here", "stop") == 1.0
    assert substring_accuracy("x ^ { 2 } + 1", "x^{2}+1") == 1.0
    assert substring_accuracy("go", "stop") == 0.0


# ----------------------------------------------------------------------------- VQA accuracy


@pytest.mark.parametrize("agree", [0, 1, 2, 3, 4, 10])
def test_vqa_accuracy_matches_leave_one_out_definition(agree):
    answers = ["cat"] * agree + [f"other{i}" for i in range(10 - agree)]
    random.Random(agree).shuffle(answers)
    expected = leave_one_out_reference("cat", answers)
    assert vqa_accuracy("cat", answers) == pytest.approx(expected, abs=1e-12)


def test_vqa_two_three_four_annotators_against_the_cutoff():
    def answers(k: int) -> list[str]:
        return ["2"] * k + ["3"] * (10 - k)

    two, three, four = (vqa_accuracy("two", answers(k)) for k in (2, 3, 4))
    assert two < three < four
    assert four == 1.0
    # two agreeing annotators sit exactly at LIME's 0.6 cutoff and must count as correct
    assert is_correct(two, 0.6)
    assert not is_correct(vqa_accuracy("two", ["2"] + ["3"] * 9), 0.6)


@pytest.mark.parametrize(
    ("prediction", "answer"),
    [
        ("Two", "2"),
        ("the dog", "dog"),
        ("a dog!", "dog"),
        ("dont", "don't"),
        ("1,234", "1234"),
        ("x-ray", "x ray"),
        ("yes.", "yes"),
        ("none", "0"),
    ],
)
def test_vqa_normalisation_equates_forms(prediction, answer):
    assert normalize_vqa_answer(prediction) == normalize_vqa_answer(answer)
    assert vqa_accuracy(prediction, [answer] * 10) == 1.0


def test_vqa_normalisation_keeps_decimals_and_distinct_words():
    assert normalize_vqa_answer("3.5") == "3.5"
    assert normalize_vqa_answer("well") != normalize_vqa_answer("we'll")
    assert vqa_accuracy("dog", ["cat"] * 10) == 0.0


def test_vqa_single_gold_is_plain_match():
    assert vqa_accuracy("Dog", "dog") == 1.0
    assert vqa_accuracy("cat", "dog") == 0.0


# ----------------------------------------------------------------------------- ANLS


def test_levenshtein_known_distances():
    assert levenshtein("kitten", "sitting") == 3
    assert levenshtein("", "abc") == 3
    assert levenshtein("flaw", "lawn") == levenshtein("lawn", "flaw") == 2
    assert levenshtein("same", "same") == 0


def test_anls_threshold_behaviour():
    assert anls("abcd", "abce") == pytest.approx(0.75)
    assert anls("abcdef", "abcxyz") == pytest.approx(0.5)  # exactly 0.5 is kept
    assert anls("abcdefg", "abcwxyz") == 0.0  # 3/7 < 0.5 becomes 0
    assert anls("  New   YORK ", "new york") == 1.0
    assert anls("abcd", ["zzzz", "abcd"]) == 1.0


def test_anls_cutoff_one_accepts_only_exact_normalised_match():
    spec = get_metric("anls")
    assert not is_correct(anls("1,234 km", "1,234 km."), spec.cutoff)
    assert is_correct(anls("1,234 KM", "1,234 km"), spec.cutoff)


# ----------------------------------------------------------------------------- relaxed accuracy


@pytest.mark.parametrize(
    ("prediction", "gold", "expected"),
    [
        ("105", "100", 1.0),
        ("95", "100", 1.0),
        ("105.01", "100", 0.0),
        ("94.99", "100", 0.0),
        ("1.05", "1", 1.0),
        ("12%", "0.12", 1.0),
        ("12%", "12", 0.0),
        ("1,234", "1234", 1.0),
        ("1,300", "1,234", 0.0),
        ("0", "0", 1.0),
        ("0.01", "0", 0.0),
        ("Yes", "yes", 1.0),
        ("Yes", "no", 0.0),
        ("about 100", "100", 0.0),
    ],
)
def test_relaxed_accuracy_five_percent_boundary(prediction, gold, expected):
    assert relaxed_accuracy(prediction, gold) == expected


def test_parse_number_forms():
    assert parse_number("1,234.5") == 1234.5
    assert parse_number("-3") == -3.0
    assert parse_number("12%") == pytest.approx(0.12)
    assert parse_number("1_000") is None
    assert parse_number("nan") is None


# ----------------------------------------------------------------------------- registry


def test_registry_has_table8_cutoffs():
    assert {name: spec.cutoff for name, spec in METRICS.items()} == {
        "accuracy": 1.0,
        "relaxed_accuracy": 1.0,
        "anls": 1.0,
        "vqa_accuracy": 0.6,
        "substring_accuracy": 1.0,
    }
    assert get_metric("exact_accuracy") is METRICS["accuracy"]
    assert get_metric("vqa").fn is vqa_accuracy


def test_unknown_metric_lists_valid_names():
    with pytest.raises(BenchsmithError) as info:
        get_metric("bleu7")
    for name in METRICS:
        assert name in str(info.value)


def test_bleu4_requires_prescored_rows():
    with pytest.raises(BenchsmithError, match="pre-scored"):
        get_metric("bleu4")
    spec = prescored_metric("bleu4")
    assert spec.cutoff == 0.2 and spec.prescored_only
    with pytest.raises(BenchsmithError):
        spec.fn("a caption", "a caption")


def test_cutoff_override_is_validated():
    assert get_metric("vqa_accuracy").with_cutoff(0.5).cutoff == 0.5
    with pytest.raises(BenchsmithError, match="cutoff"):
        get_metric("vqa_accuracy").with_cutoff(1.5)


def test_comparator_boundary():
    assert is_correct(0.6, 0.6)
    assert not is_correct(0.59, 0.6)
    naive_mean_of_thirds = sum([2 / 3] * 8 + [1 / 3] * 2) / 10
    assert naive_mean_of_thirds < 0.6  # binary rounding puts it just below
    assert is_correct(naive_mean_of_thirds, 0.6)


@pytest.mark.parametrize("name", sorted(METRICS))
def test_every_metric_stays_in_unit_interval(name):
    fn = METRICS[name].fn
    rng = random.Random(name)
    alphabet = string.ascii_letters + string.digits + " .,%-()"
    for _ in range(200):
        prediction = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        golds = [
            rng.choice(string.ascii_letters) + "".join(rng.choice(alphabet) for _ in range(5))
            for _ in range(3)
        ]
        assert 0.0 <= fn(prediction, golds) <= 1.0
        assert fn(golds[0], [golds[0]] * 4) == 1.0
