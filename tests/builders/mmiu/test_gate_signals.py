"""The gate looks at pixels, positions and other items: each shortcut the original-style
distractors had is planted on purpose in the sample plan's own rows, and the gate fails it;
the rows our tasks make pass.

The planted rows are rendered without the sha256 check (their images were changed on purpose).
"""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
from PIL import Image

from benchsmith.builders.mmiu.config import ShortcutGate
from benchsmith.builders.mmiu.images import png_bytes, ref_params, render_image
from benchsmith.builders.mmiu.plan_dir import MmiuPlanDir
from benchsmith.builders.mmiu.shortcuts import check_task


@pytest.fixture(scope="module")
def plan(mmiu_plan):
    return MmiuPlanDir.read(mmiu_plan)


@pytest.fixture(scope="module")
def render(plan):
    sources = plan.image_sources()
    cache: dict[str, bytes] = {}

    def rendered(ref: dict) -> bytes:
        key = json.dumps(ref, sort_keys=True)
        if key not in cache:
            cache[key] = render_image(ref, sources)
        return cache[key]

    return rendered


def rule(report: dict, name: str) -> dict:
    return next(r for r in report["rules"] if r["name"] == name)


def test_the_sample_plan_passes_with_the_image_rules(plan, render):
    for task in plan.tasks:
        report = check_task(list(plan.rows(task)), ShortcutGate(), render=render)
        assert report["verdict"] == "pass", (task, report["why"])
        assert any(r["name"] == "learned_options_only" for r in report["rules"]), task


# --- correspondence: the gold drawn nearest REF's position ---------------------------------------


def marks_of(row: dict) -> dict[str, tuple[float, float]]:
    out = {}
    for ref in row["images"]:
        out.update({m[0]: (m[1], m[2]) for m in ref_params(ref).get("marks", [])})
    return out


def test_our_correspondence_gold_is_not_the_point_nearest_ref(plan):
    rows = list(plan.rows("visual_correspondence_scannet"))
    nearest = 0
    for row in rows:
        marks = marks_of(row)
        distance = [math.dist(marks[chr(65 + k)], marks["REF"]) for k in range(4)]
        nearest += int(np.argmin(distance)) == row["answer_index"]
    assert nearest <= len(rows) / 2  # the original way: every time


def test_a_gold_drawn_next_to_ref_fails_the_gate(plan, render):
    rows = []
    for row in plan.rows("visual_correspondence_scannet"):
        images = [dict(ref) for ref in row["images"]]
        marked = ref_params(images[-1])
        ref_x, ref_y = marks_of(row)["REF"]
        for k, mark in enumerate(marked["marks"]):
            if k == row["answer_index"]:
                mark[1:] = [ref_x + 2.0, ref_y + 1.0]
            else:
                mark[1:] = [ref_x + 40.0 * (1 if k % 2 else -1), ref_y + 25.0 * (k - 1.5)]
        images[-1]["params"] = json.dumps(marked, sort_keys=True, separators=(",", ":"))
        rows.append({**row, "images": images})
    report = check_task(rows, ShortcutGate(), render=render)
    assert report["verdict"] == "fail"
    assert "smallest:distance_to_ref_position" in report["failing_rules"]
    assert rule(report, "smallest:distance_to_ref_position")["accuracy"] == 1.0


# --- object detection: a recurring, rounder gold among fresh jitter --------------------------------


def test_a_recurring_round_gold_among_fresh_jitter_fails_the_gate(plan, render):
    rng = np.random.default_rng(0)
    rows = []
    for k, row in enumerate(plan.rows("3d_object_detection")):
        gold = "[[1.0, 2.0, 0.5, 0.6, 0.6, 1.0]]"  # recurs in every item, one decimal
        options = [
            gold if j == row["answer_index"]
            else "[[" + ", ".join(f"{v:.2f}" for v in rng.uniform(0.1, 3, 6)) + "]]"
            for j in range(4)
        ]  # fmt: skip
        rows.append({**row, "options": options, "id": f"{row['id']}-{k}"})
    report = check_task(rows, ShortcutGate(), render=render)
    assert report["verdict"] == "fail"
    assert {"largest:recurrence_in_other_items", "largest:coarse_share"} <= set(
        report["failing_rules"]
    )


def test_our_object_detection_options_are_real_boxes(plan, mmiu_sources):
    """Every option box is an annotated object of the source's scenes (rounded as golds are;
    same-category boxes of other scenes come before other categories), read here from each
    scene's mesh, segments and aggregation independently of the task. Where the scenes hold
    too few boxes of the asked category, another category fills in: the plan counts those."""
    from benchsmith.builders.mmiu.scenes import scene_labels
    from benchsmith.sources.scannet.scene import object_boxes

    labels = scene_labels(mmiu_sources.scannet)
    real: dict[tuple, str] = {}
    for scene in sorted((mmiu_sources.scannet / "scans").iterdir()):
        for b in object_boxes(scene, labels)[0]:
            real[tuple(round(v, 2) for v in (*b.center, *b.size))] = b.category
    rows = list(plan.rows("3d_object_detection"))
    same_category = foreign_items = 0
    for row in rows:
        category = json.loads(row["task_extras"])["category"]
        foreign = False
        for k, option in enumerate(row["options"]):
            boxes = [tuple(box) for box in json.loads(option)]
            assert all(box in real for box in boxes), (row["id"], option)
            if k != row["answer_index"]:
                same_category += all(real[box] == category for box in boxes)
                foreign |= not all(real[box] == category for box in boxes)
        foreign_items += foreign
    assert same_category > 0
    notes = plan.info.get("notes", {}).get("3d_object_detection", {})
    assert sum(notes.values()) == foreign_items  # every item with another category is counted


# --- scene reconstruction: the gold is a copy of view B -------------------------------------------


def test_a_candidate_that_looks_like_view_b_fails_the_gate(plan, render):
    rows = []
    for row in plan.rows("3d_scene_reconstruction"):
        images = [dict(ref) for ref in row["images"]]
        images[4 + row["answer_index"]] = dict(images[2])  # the colour of view B
        rows.append({**row, "images": images})
    report = check_task(rows, ShortcutGate(), render=render)
    assert report["verdict"] == "fail"
    assert "largest:likeness_to_a_reference" in report["failing_rules"]


# --- jigsaw: deflated pieces, the smooth sky the smallest ------------------------------------------


def test_piece_file_sizes_tell_nothing_and_deflated_pieces_fail_the_gate(plan, render):
    rows = list(plan.rows("jigsaw_puzzle_solving"))
    for row in rows:
        assert len({len(render(ref)) for ref in row["images"]}) == 1  # stored: one size
    report = check_task(rows, ShortcutGate(), render=render)
    assert rule(report, "smallest:top_row_file_bytes")["coverage"] == 0.0
    texture = rule(report, "smallest:top_row_texture")
    assert texture["gating"] is False and texture["fails"] is False  # the skill, reported

    def deflated(ref: dict) -> bytes:
        with Image.open(io.BytesIO(render(ref))) as image:
            return png_bytes(image.convert("RGB"), compress_level=9)

    report = check_task(rows, ShortcutGate(), render=deflated)
    assert report["verdict"] == "fail"
    assert "smallest:top_row_file_bytes" in report["failing_rules"]


# --- COCO twins: one picture is one item --------------------------------------------------------


def test_a_twin_of_a_used_coco_picture_is_skipped(mmiu_sources):
    """The sample COCO plants pictures under a second id (one identical, three re-encoded):
    a task that used one copy skips the other, counted; another task may still use it."""
    from benchsmith.builders.mmiu.config import MmiuConfig
    from benchsmith.builders.mmiu.images import ImageSources
    from benchsmith.builders.mmiu.tasks.context import TaskContext
    from benchsmith.sources.coco.reader import read_captions
    from benchsmith.sources.coco.sample import sample_image_specs

    coco = read_captions(mmiu_sources.coco / "annotations" / "captions_val2014.json")
    by_id = {image.image_id: image for image in coco.images}
    ctx = TaskContext(MmiuConfig.from_params({}, "sample"),
                      ImageSources(coco_images=mmiu_sources.coco / "val2014"), coco=coco)  # fmt: skip
    twins = [(s.copy_of, s.image_id) for s in sample_image_specs(660) if s.copy_of]
    assert len(twins) == 4
    for original, copy in twins:
        assert ctx.new_picture("jigsaw_puzzle_solving", by_id[original])
        assert not ctx.new_picture("jigsaw_puzzle_solving", by_id[copy])
        assert ctx.new_picture("image_spatial_transformation_estimation", by_id[copy])
    assert ctx.skips == {("jigsaw_puzzle_solving",
                          "a twin of a COCO picture the task already used"): 4}  # fmt: skip
    others = [i for i in coco.images if i.image_id not in {x for pair in twins for x in pair}]
    assert all(ctx.new_picture("jigsaw_puzzle_solving", image) for image in others[:40])
