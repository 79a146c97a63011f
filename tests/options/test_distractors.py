"""Distractors drawn from the gold's own distribution, formatted like it, never equal to it,
distinct, with every answer letter equally often: no option-only rule beats chance."""

from __future__ import annotations

import math

import numpy as np
import pytest

from benchsmith.options.distractors import (
    DistractorError,
    OptionSet,
    assemble,
    balanced_positions,
    box_distractors,
    box_iou,
    format_matrix,
    format_number,
    format_signature,
    label_distractors,
    number_distractors,
    option_report,
    permutation_distractors,
    pose_distractors,
    rotation_angle,
)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def small_pose(generator: np.random.Generator) -> np.ndarray:
    """A nearby-frame relative pose like MMIU's 3DPE gold: under a degree, a few mm."""
    from benchsmith.options.distractors import _rotation

    pose = np.eye(4)
    pose[:3, :3] = _rotation(generator.normal(size=3), math.radians(generator.uniform(0.2, 1.0)))
    pose[:3, 3] = generator.normal(size=3) * 0.004
    return pose


def test_pose_options_leave_closest_to_identity_at_chance():
    """The original's 3DPE shortcut: the gold was the only near-identity matrix (a blind model
    scored 65%). Here the distractors are drawn like the gold, so picking the option closest to
    identity finds the gold about 1 time in 4."""
    generator = rng(1)
    items, hits = [], 0
    positions = balanced_positions(1000, 4, generator)
    for position in positions:
        gold = small_pose(generator)
        distractors = pose_distractors(gold, 3, generator, decimals=6)
        texts = [format_matrix(d[:3], 6) for d in distractors]
        item = assemble(format_matrix(gold[:3], 6), texts, position, "pose")
        items.append(item)
        matrices = [gold if k == position else None for k in range(4)]
        others = iter(distractors)
        matrices = [m if m is not None else next(others) for m in matrices]
        closeness = [np.linalg.norm(m - np.eye(4)) for m in matrices]
        hits += int(np.argmin(closeness)) == position
    assert 0.19 <= hits / 1000 <= 0.31, hits
    report = option_report(items)
    assert report.ok and report.items == 1000
    assert set(report.letters.values()) == {250}
    assert report.letter_p > 0.99
    for item in items[:50]:
        assert len({format_signature(o) for o in item.options}) == 1  # one format, one precision


def test_numbers_keep_the_golds_precision_and_never_repeat_it():
    for gold, decimals in ((3.0, 0), (2.75, 2), (-0.125, 3), (0.0, 1)):
        values = number_distractors(gold, 3, rng(7), decimals)
        gold_text = format_number(gold, decimals)
        assert gold_text not in values and len(set(values)) == 3
        assert {format_signature(v).lstrip("-") for v in values} <= {
            format_signature(gold_text).lstrip("-"),
            format_signature(gold_text),
        }
        assert all(len(v.split(".")[-1]) == decimals for v in values if decimals)


def test_boxes_have_positive_sizes_and_low_overlap():
    gold = [[1.0, 2.0, 0.5, 0.6, 0.4, 1.0], [3.0, 1.0, 0.4, 1.2, 0.8, 0.8]]
    options = box_distractors(gold, 3, rng(3), decimals=3, max_iou=0.5)
    assert len(options) == 3
    for option in options:
        assert len(option) == 2
        for box, gold_box in zip(option, gold, strict=True):
            assert min(box[3:]) > 0
            assert box_iou(box, gold_box) <= 0.5
    for a in range(3):
        for b in range(a + 1, 3):
            assert all(box_iou(x, y) <= 0.5 for x, y in zip(options[a], options[b], strict=True))
    assert box_iou(gold[0], gold[0]) == pytest.approx(1.0)
    with pytest.raises(DistractorError, match="size <= 0"):
        box_distractors([[0, 0, 0, 1, -1, 1]], 3, rng(), 3)


def test_permutations_and_labels():
    perms = permutation_distractors((0, 1, 2, 3), 3, rng(5))
    assert (0, 1, 2, 3) not in perms and len(set(perms)) == 3
    assert all(sorted(p) == [0, 1, 2, 3] for p in perms)
    with pytest.raises(DistractorError, match="only 1 other orders"):
        permutation_distractors((0, 1), 3, rng())
    labels = label_distractors("chair", ["chair", "table", "sofa", "bed", "lamp"], 3, rng(2))
    assert "chair" not in labels and len(set(labels)) == 3
    with pytest.raises(DistractorError, match="label pool"):
        label_distractors("chair", ["chair", "table"], 3, rng())


def test_same_seed_same_options_and_the_report_catches_each_flaw():
    first = pose_distractors(small_pose(rng(9)), 3, rng(4), 6)
    again = pose_distractors(small_pose(rng(9)), 3, rng(4), 6)
    assert all(np.array_equal(a, b) for a, b in zip(first, again, strict=True))
    assert rotation_angle(np.eye(3)) == 0.0
    flawed = [
        OptionSet(["1.00", "1.00", "2.00", "3.00"], 0, ["gold", "n", "n", "n"]),  # gold repeated
        OptionSet(["1.00", "2.0", "3.00", "4.00"], 1, ["n", "gold", "n", "n"]),  # mixed precision
        OptionSet(["a.jpg", "b.png", "c.png", "d.png"], 0, ["gold", "i", "i", "i"]),  # odd format
    ]
    report = option_report(flawed)
    assert report.gold_among_distractors == 1 and report.duplicate_options == 1
    assert report.mixed_formats == 2  # "2.0" among "x.00"; the only ".jpg" among ".png"
    assert format_signature("[1.250, -0.500]") == format_signature("[3.000, 0.750]")
    assert format_signature("chair") == format_signature("table")
    assert not report.ok
    skewed = [OptionSet(["x", "y"], 0, ["gold", "n"]) for _ in range(100)]
    assert option_report(skewed).letter_p < 0.01
