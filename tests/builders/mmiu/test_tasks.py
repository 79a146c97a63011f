"""Every task's answer checked against the known geometry of the miniature scenes and images.

The ScanNet scenes are ray-cast from boxes and poses known exactly
(:func:`benchsmith.sources.scannet.sample.sample_scene_truth`), so each gold answer is
recomputed here from that truth, not from what the builder read; COCO answers are checked by
reassembling or re-transforming the pixels.
"""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from benchsmith.builders.mmiu.config import TASKS, MmiuConfig
from benchsmith.builders.mmiu.images import ImageSources, ref_params, render_image
from benchsmith.builders.mmiu.plan import MmiuSources, build_mmiu
from benchsmith.builders.mmiu.tasks.spatial_transform import transform_text
from benchsmith.core.errors import BenchsmithError, SourceError
from benchsmith.options.blind_numeric_rules import option_numbers
from benchsmith.options.distractors import OptionSet, option_report
from benchsmith.sources.scannet.sample import (
    COLOR_SIZE,
    FAILED_FRAME,
    _intrinsics,
    ray_cast,
    sample_scene_truth,
)

POSE_TOLERANCE = 1.5e-3  # printed to 3 decimals from float32 poses


def rows(plan: Path, task: str) -> list[dict]:
    return [
        json.loads(line) for line in (plan / "items" / f"{task}.jsonl").read_text().splitlines()
    ]


def truth_of(scene: str):
    return sample_scene_truth(int(scene[5:9]))


def frames_of(row: dict) -> list[tuple[str, int]]:
    return [(s.split("/")[0], int(s.split("/")[2])) for s in row["source_ids"]]


def matrix_in(text: str, label: str) -> np.ndarray:
    found = re.search(re.escape(label) + r" (\[\[.*?\]\])", text)
    assert found, label
    return np.array(option_numbers(found.group(1))).reshape(3, 4)


def sources(sources_: MmiuSources) -> ImageSources:
    return ImageSources(scannet=sources_.scannet, coco_images=sources_.coco / "val2014")


def test_every_task_has_its_items_and_every_guarantee(mmiu_plan):
    info = json.loads((mmiu_plan / "build_info.json").read_text())
    assert info["counts"] == {task: 12 for task in TASKS}
    for task in TASKS:
        items = rows(mmiu_plan, task)
        report = option_report([OptionSet(r["options"], r["answer_index"], r["option_methods"])
                                for r in items])  # fmt: skip
        assert report.ok, (task, report.as_dict())
        assert max(report.letters.values()) - min(report.letters.values()) <= 1
        assert len({r["id"] for r in items}) == 12 and all(r["task"] == task for r in items)
        for row in items:
            assert row["context"].endswith("\n".join(f"{chr(65 + k)}: {o}" for k, o in
                                                      enumerate(row["options"])))  # fmt: skip
            assert row["answer"] == chr(65 + row["answer_index"])
            assert row["option_methods"][row["answer_index"]] == "gold"
            assert all(f"/frame/{FAILED_FRAME}" not in s for s in row["source_ids"])


def test_pose_estimation_gold_is_the_true_relative_pose(mmiu_plan):
    for row in rows(mmiu_plan, "3d_pose_estimation"):
        (scene, first), (_, second) = frames_of(row)
        truth = truth_of(scene)
        expected = (np.linalg.inv(truth.poses[second]) @ truth.poses[first])[:3]
        gold = np.array(option_numbers(row["options"][row["answer_index"]])).reshape(3, 4)
        assert np.abs(gold - expected).max() <= POSE_TOLERANCE, row["id"]
        assert [i["kind"] for i in row["images"]] == ["scannet_color", "scannet_depth"] * 2
        for k, option in enumerate(row["options"]):
            if k != row["answer_index"]:
                other = np.array(option_numbers(option)).reshape(3, 4)
                assert np.abs(other - gold).max() > 2 * POSE_TOLERANCE
        assert np.allclose(row["camera_poses"][0], truth.poses[first], atol=1e-5)


def test_scene_reconstruction_gold_is_the_frame_at_the_query_pose(mmiu_plan):
    for row in rows(mmiu_plan, "3d_scene_reconstruction"):
        frames = json.loads(row["task_extras"])["candidate_frames"]
        scene = row["source_ids"][0].split("/")[0]
        truth = truth_of(scene)
        query = matrix_in(row["context"], "Query pose:")
        assert np.abs(query - truth.poses[frames[0]][:3]).max() <= POSE_TOLERANCE
        candidates = row["images"][4:]
        assert {c["kind"] for c in candidates} == {"scannet_color"}  # one encoding for all
        assert candidates[row["answer_index"]]["frame"] == frames[0]
        assert row["options"] == [f"Image {k}" for k in range(5, 9)]


def test_depth_estimation_gold_is_view_b_depth(mmiu_plan):
    for row in rows(mmiu_plan, "3d_depth_estimation"):
        (_, _a), (_, b) = frames_of(row)[:2]
        candidates = row["images"][2:]
        assert {c["kind"] for c in candidates} == {"scannet_depth"}
        assert candidates[row["answer_index"]]["frame"] == b
        assert len({c["frame"] for c in candidates}) == 4


def test_object_detection_boxes_are_the_true_boxes_in_the_pose_frame(mmiu_plan):
    for row in rows(mmiu_plan, "3d_object_detection"):
        (scene, frame) = frames_of(row)[0]
        truth = truth_of(scene)
        extras = json.loads(row["task_extras"])
        truths = [np.array([*((low + high) / 2), *(high - low)])
                  for label, low, high in truth.objects if label == extras["category"]]  # fmt: skip
        gold = np.array(option_numbers(row["options"][row["answer_index"]])).reshape(-1, 6)
        assert len(gold) == len(extras["object_ids"]) <= len(truths)
        for box in gold:  # each gold box is one of the category's true boxes
            assert any(np.allclose(box, t, atol=0.006) for t in truths), box
        pose = matrix_in(row["context"], "as 3x4 [R | t]:")
        assert np.abs(pose - truth.poses[frame][:3]).max() <= POSE_TOLERANCE
        bottoms = set()
        for option in row["options"]:
            boxes = np.array(option_numbers(option)).reshape(-1, 6)
            assert (boxes[:, 3:] > 0).all()
            bottoms.add(round(float(boxes[0, 2] - boxes[0, 5] / 2), 1))
        assert len(bottoms) == 1  # no distractor floats or sinks


def test_correspondence_gold_point_is_the_reprojected_reference(mmiu_plan):
    for row in rows(mmiu_plan, "visual_correspondence_scannet"):
        (scene, a), (_, b) = frames_of(row)
        truth = truth_of(scene)
        extras = json.loads(row["task_extras"])
        depth, _ = ray_cast(truth, truth.poses[a], COLOR_SIZE)
        fx, fy, cx, cy = _intrinsics(COLOR_SIZE)
        x, y = extras["ref_pixel"]
        z = depth[int(y), int(x)]
        camera = np.array([(x - cx) / fx * z, (y - cy) / fy * z, z, 1.0])
        in_b = np.linalg.inv(truth.poses[b]) @ truth.poses[a] @ camera
        u, v = fx * in_b[0] / in_b[2] + cx, fy * in_b[1] / in_b[2] + cy
        assert abs(u - extras["gold_pixel"][0]) < 2.5 and abs(v - extras["gold_pixel"][1]) < 2.5
        marks = ref_params(row["images"][1])["marks"]
        letter = row["answer"]
        assert [m for m in marks if m[0] == letter][0][1:] == extras["gold_pixel"]
        assert ref_params(row["images"][0])["marks"][0][0] == "REF"


def test_jigsaw_gold_order_reassembles_the_photo(mmiu_plan, mmiu_sources):
    from benchsmith.sources.coco.reader import read_captions

    files = {str(i.image_id): i.file_name
             for i in read_captions(mmiu_sources.coco / "annotations/captions_val2014.json").images}  # fmt: skip
    images = sources(mmiu_sources)
    for row in rows(mmiu_plan, "jigsaw_puzzle_solving")[:6]:
        pieces = [Image.open(io.BytesIO(render_image(r, images))) for r in row["images"]]
        order = option_numbers(row["options"][row["answer_index"]])
        w, h = pieces[0].size
        sheet = Image.new("RGB", (2 * w, 2 * h))
        for cell, number in enumerate(order):
            sheet.paste(pieces[int(number) - 1], ((cell % 2) * w, (cell // 2) * h))
        original = Image.open(mmiu_sources.coco / "val2014" / files[row["source_ids"][0][5:]])
        assert np.array_equal(
            np.asarray(sheet), np.asarray(original.convert("RGB").crop((0, 0, 2 * w, 2 * h)))
        )


def test_spatial_transform_gold_is_the_rendered_transform(mmiu_plan):
    for row in rows(mmiu_plan, "image_spatial_transformation_estimation"):
        first, second = (ref_params(r) for r in row["images"])
        assert (first["flip"], first["angle"], first["scale"]) == (False, 0, 1.0)
        gold = transform_text(second["flip"], second["angle"], second["scale"])
        assert row["options"][row["answer_index"]] == gold


def test_same_sources_and_params_give_the_same_bytes(mmiu_plan, mmiu_sources, tmp_path):
    again = tmp_path / "again"
    build_mmiu(MmiuConfig.from_params({}, "sample"), mmiu_sources, again)
    for task in TASKS:
        assert (again / "items" / f"{task}.jsonl").read_bytes() == (
            mmiu_plan / "items" / f"{task}.jsonl"
        ).read_bytes()
    other = tmp_path / "other"
    build_mmiu(MmiuConfig.from_params({}, "sample", seed=5), mmiu_sources, other)
    assert (other / "items/jigsaw_puzzle_solving.jsonl").read_bytes() != (
        mmiu_plan / "items/jigsaw_puzzle_solving.jsonl"
    ).read_bytes()


@pytest.fixture
def broken_scannet(mmiu_sources, tmp_path) -> Path:
    return Path(shutil.copytree(mmiu_sources.scannet, tmp_path / "ScanNet"))


def build_detection(scannet: Path, coco: Path, out: Path) -> None:
    config = MmiuConfig.from_params({}, "sample", tasks=["3d_object_detection"])
    build_mmiu(config, MmiuSources(scannet, coco), out)


def test_bad_scenes_are_errors_naming_the_file(broken_scannet, mmiu_sources, tmp_path):
    scene = broken_scannet / "scans" / "scene0001_00"
    aggregation = scene / "scene0001_00.aggregation.json"
    saved = aggregation.read_bytes()
    aggregation.unlink()
    with pytest.raises(SourceError, match="scene file missing") as error:
        build_detection(broken_scannet, mmiu_sources.coco, tmp_path / "a")
    assert "scene0001_00.aggregation.json" in str(error.value)
    aggregation.write_bytes(saved)
    mesh = scene / "scene0001_00_vh_clean_2.ply"
    saved = mesh.read_bytes()
    mesh.write_bytes(b"ply\nformat binary_little_endian 1.0\nelement vertex 3\nend_header\n\x00")
    with pytest.raises(SourceError) as error:
        build_detection(broken_scannet, mmiu_sources.coco, tmp_path / "b")
    assert "_vh_clean_2.ply" in str(error.value)
    mesh.write_bytes(saved)
    labels = broken_scannet / "scannetv2-labels.combined.tsv"
    labels.write_text("\n".join(line for line in labels.read_text().splitlines()
                                if "\tchair\t" not in line) + "\n")  # fmt: skip
    with pytest.raises(SourceError, match=r"\['chair'\] of this scene are not in"):
        build_detection(broken_scannet, mmiu_sources.coco, tmp_path / "c")
    assert not (tmp_path / "c").exists()  # nothing half-written


def test_a_truncated_stream_is_an_error_naming_it(broken_scannet, mmiu_sources, tmp_path):
    sens = broken_scannet / "scans" / "scene0000_00" / "scene0000_00.sens"
    sens.write_bytes(sens.read_bytes()[:-5000])
    config = MmiuConfig.from_params({}, "sample", tasks=["3d_pose_estimation"])
    with pytest.raises(SourceError, match="truncated .sens file") as error:
        build_mmiu(config, MmiuSources(broken_scannet, mmiu_sources.coco), tmp_path / "p")
    assert "scene0000_00.sens" in str(error.value)


def test_missing_sources_and_impossible_limits_are_clear_errors(mmiu_sources, tmp_path):
    config = MmiuConfig.from_params({}, "sample", tasks=["3d_pose_estimation"])
    with pytest.raises(BenchsmithError, match="scannet source folder is missing"):
        build_mmiu(config, MmiuSources(tmp_path / "nowhere", mmiu_sources.coco), tmp_path / "x")
    strict = MmiuConfig.from_params(
        {"frames": {"sample": {"min_overlap": 1.0, "stride": 3}}}, "sample",
        tasks=["3d_pose_estimation"],
    )  # fmt: skip
    with pytest.raises(BenchsmithError, match="3d_pose_estimation produced no item") as error:
        build_mmiu(strict, mmiu_sources, tmp_path / "y")
    assert "mmiu.frames" in str(error.value)
