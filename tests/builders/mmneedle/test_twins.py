"""Twins are one picture: the canonical plan never shows a picture twice in a haystack, never
makes a twin of a haystack image a negative needle, and keeps every positive's gold unique by
pixels; the legacy plan replays the original and flags the samples twins spoil.

Every check here re-derives the pictures from the image files (sha256 of decoded pixels and a
perceptual hash, compared pair by pair), not from the twins report the plan read.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
from curate_fixtures import jpeg_bytes, texture

from benchsmith.builders.mmneedle.rows import sample_decisions
from benchsmith.cli import main
from benchsmith.images.hashes import hash_image
from benchsmith.sources.coco.sample import sample_image_specs

THRESHOLD = 4


# --- pictures, re-derived from the files ------------------------------------------------------


class Pictures:
    """Pixel fingerprints of a folder's images, and whether two ids show one picture."""

    def __init__(self, images: Path, names: dict[int, str]):
        hashed = {i: hash_image((images / name).read_bytes()) for i, name in names.items()}
        self.sha = {i: h.pixel_sha256 for i, h in hashed.items()}
        self.phash = {i: h.phash for i, h in hashed.items()}
        self.flat = {i: h.low_information for i, h in hashed.items()}

    def same(self, ids: list[int], needle: int) -> np.ndarray:
        """Per id of ``ids``: does it show ``needle``'s picture (equal pixels, or close hashes
        of two structured images)?"""
        phash = np.array([self.phash[i] for i in ids], dtype=np.uint64)
        distance = np.bitwise_count(phash ^ np.uint64(self.phash[needle]))
        near = (distance <= THRESHOLD) & ~np.array([self.flat[i] for i in ids])
        exact = np.array([self.sha[i] == self.sha[needle] for i in ids])
        return exact | (near & (not self.flat[needle]))

    def shown_twice(self, ids: list[int]) -> bool:
        """Do two slots of ``ids`` show one picture? :meth:`same` for every pair at once."""
        phash = np.array([self.phash[i] for i in ids], dtype=np.uint64)
        structured = ~np.array([self.flat[i] for i in ids], dtype=bool)
        near = np.bitwise_count(phash[:, None] ^ phash[None, :]) <= THRESHOLD
        near &= structured[:, None] & structured[None, :]
        exact = len({self.sha[i] for i in ids}) < len(ids)
        return exact or bool(np.triu(near, k=1).any())


def plan_tables(plan: Path) -> tuple[dict[str, list[int]], dict[str, pl.DataFrame]]:
    cells: dict[str, list[int]] = {}
    for path in (plan / "pools").glob("n*.parquet"):
        for sid, row_cells in pl.read_parquet(path).select("stitched_id", "cells").iter_rows():
            cells[sid] = [c["coco_image_id"] for c in row_cells]
    samples = {p.stem: pl.read_parquet(p) for p in sorted((plan / "samples").glob("*.parquet"))}
    return cells, samples


def spoiled(plan: Path, pictures: Pictures) -> dict[str, dict[int, tuple[bool, int]]]:
    """Per config and sample: (haystack shows a picture twice, needles whose picture shows in
    a slot under another id), from pixels."""
    cells, samples = plan_tables(plan)
    out: dict[str, dict[int, tuple[bool, int]]] = {}
    for name, frame in samples.items():
        out[name] = {}
        for row in frame.iter_rows(named=True):
            slots = [i for sid in row["haystack"] for i in cells[sid]]
            twice = pictures.shown_twice(slots)
            twins = 0
            for needle in row["needles"]:
                other_id = np.array([i != needle["coco_image_id"] for i in slots])
                twins += bool((pictures.same(slots, needle["coco_image_id"]) & other_id).any())
            out[name][row["sample_id"]] = (twice, twins)
    return out


def assert_golds_true_by_pixels(plan: Path, pictures: Pictures) -> int:
    """No picture twice in a haystack; a negative's needle shows in no slot; a positive's
    needle shows in exactly its gold slot. Returns the number of samples checked."""
    cells, samples = plan_tables(plan)
    checked = 0
    for name, frame in samples.items():
        for row in frame.iter_rows(named=True):
            slots = [i for sid in row["haystack"] for i in cells[sid]]
            assert not pictures.shown_twice(slots), (name, row["sample_id"])
            grid = row["grid"]
            for needle in row["needles"]:
                shown = np.flatnonzero(pictures.same(slots, needle["coco_image_id"])).tolist()
                if needle["image_index"] is None:
                    assert shown == [], (name, row["sample_id"], "negative shown")
                else:
                    gold = (needle["image_index"] - 1) * grid * grid
                    gold += (needle["row"] - 1) * grid + needle["col"] - 1
                    assert shown == [gold], (name, row["sample_id"], "positive not unique")
            checked += 1
    return checked


# --- the sample build --------------------------------------------------------------------------


def run_twins(captions: Path, images: Path, out: Path, *extra: str) -> dict:
    argv = ["build", "mmneedle", "twins", "--captions", str(captions), "--images", str(images)]
    assert main([*argv, "--out", str(out / "twins.json"), *extra]) == 0
    return json.loads((out / "twins.json").read_text(encoding="utf-8"))


def run_plan(captions: Path, out: Path, *extra: str) -> dict:
    argv = ["build", "mmneedle", "plan", "--captions", str(captions), "--pool-size", "20"]
    assert main([*argv, "--samples", "12", "--out", str(out), *extra]) == 0
    return json.loads((out / "plan_info.json").read_text(encoding="utf-8"))


def test_the_sample_coco_twins_are_the_planted_copies_and_the_plan_keeps_one_of_each(
    sample_coco, tmp_path
):
    captions = sample_coco / "annotations" / "captions_val2014.json"
    metrics = tmp_path / "metrics.json"
    report = run_twins(captions, sample_coco / "val2014", tmp_path, "--metrics", str(metrics))
    planted = sorted(
        (tuple(sorted((s.image_id, s.copy_of))), s.copy_kind)
        for s in sample_image_specs(660)
        if s.copy_of
    )
    assert [(tuple(g["ids"]), g["kind"]) for g in report["groups"]] == planted
    assert [g["keep"] for g in report["groups"]] == [ids[0] for ids, _ in planted]
    assert json.loads(metrics.read_text()) == {
        "source_images": 660,
        "twin_groups": 4,
        "exact_groups": 1,
        "near_groups": 3,
        "images_set_aside": 4,
    }

    plan = tmp_path / "plan"
    info = run_plan(captions, plan, "--twins", str(tmp_path / "twins.json"))
    assert info["candidates"] == 656 and info["stats"]["twin_images_set_aside"] == 4
    assert info["twins"]["twin_groups"] == 4
    used = set(pl.read_parquet(plan / "images.parquet")["coco_image_id"].to_list())
    assert not used & {ids[1] for ids, _ in planted}  # no set-aside copy is ever used
    names = dict(
        pl.read_parquet(plan / "images.parquet").select("coco_image_id", "file_name").iter_rows()
    )
    assert assert_golds_true_by_pixels(plan, Pictures(sample_coco / "val2014", names)) == 21 * 12
    assert all(block["samples_with_twin_needle"] == 0 for block in info["configs"].values())


def test_without_twins_the_plan_tells_images_apart_by_id_only(sample_coco, tmp_path):
    """The ids-only plan uses both copies of a planted picture (the flaw this step fixes)."""
    captions = sample_coco / "annotations" / "captions_val2014.json"
    info = run_plan(captions, tmp_path / "plan")
    assert info["candidates"] == 660 and info["twins"] is None
    used = set(pl.read_parquet(tmp_path / "plan" / "images.parquet")["coco_image_id"].to_list())
    copies = {s.image_id for s in sample_image_specs(660) if s.copy_of}
    assert used & copies


# --- twins planted on purpose -------------------------------------------------------------------


def twin_coco(root: Path, pictures: int = 12) -> tuple[Path, Path]:
    """``pictures`` photos, each under two ids (one byte-identical, the rest re-encoded), every
    id with its own wording of a caption: ids and captions never reveal the twins."""
    images, annotations = [], []
    folder = root / "val2014"
    folder.mkdir(parents=True)
    for k in range(pictures):
        picture = texture(1000 + k, 96)
        for copy, image_id in enumerate((10 + k, 500 + 7 * k)):
            name = f"COCO_val2014_{image_id:012d}.jpg"
            quality = 95 if copy == 0 or k == 0 else 70
            data = jpeg_bytes(picture, 95) if k == 0 else jpeg_bytes(picture, quality)
            (folder / name).write_bytes(data)
            images.append({"id": image_id, "file_name": name, "license": 1, "width": 96,
                           "height": 96})  # fmt: skip
            wording = "A patch of colour number" if copy == 0 else "Coloured squares, picture"
            annotations.append({"id": 3 * image_id, "image_id": image_id,
                                "caption": f"{wording} {k}."})  # fmt: skip
    captions = root / "annotations" / "captions_val2014.json"
    captions.parent.mkdir(parents=True)
    captions.write_text(json.dumps({"images": images, "annotations": annotations,
                                    "licenses": [{"id": 1, "name": "CC", "url": ""}]}))  # fmt: skip
    return captions, folder


def test_legacy_flags_every_sample_twins_spoil_and_canonical_has_none(tmp_path):
    captions, images = twin_coco(tmp_path / "coco")
    report = run_twins(captions, images, tmp_path)
    assert report["twin_groups"] == 12 and report["exact_groups"] == 1
    names = {int(p.stem.rsplit("_", 1)[1]): p.name for p in images.glob("*.jpg")}
    pictures = Pictures(images, names)
    small = ["--grids", "2", "--haystack-sizes", "2", "--needle-counts", "1", "2"]
    twins = ["--twins", str(tmp_path / "twins.json")]

    legacy = tmp_path / "legacy"
    info = run_plan(captions, legacy, "--order", "legacy", *small, *twins)
    expected = spoiled(legacy, pictures)
    _, samples = plan_tables(legacy)
    flagged = 0
    for name, frame in samples.items():
        found = {
            row["sample_id"]: (row["haystack_has_duplicate_image"],
                               row["needles_with_twin_in_haystack"])
            for row in frame.iter_rows(named=True)
        }  # fmt: skip
        assert found == expected[name], name
        assert info["configs"][name]["samples_with_twin_needle"] == sum(
            1 for _, twins_shown in expected[name].values() if twins_shown
        )
        twin_needle = pl.col("needles_with_twin_in_haystack") > 0
        flagged += frame.filter(~pl.col("is_positive") & twin_needle).height
    assert flagged > 0  # the replay really makes twins of haystack images negative needles
    assert info["candidates"] == 24

    canonical = tmp_path / "canonical"
    info = run_plan(captions, canonical, *small, *twins)
    assert info["candidates"] == 12
    assert assert_golds_true_by_pixels(canonical, pictures) == 2 * 12
    assert all(not twice and not n for s in spoiled(canonical, pictures).values()
               for twice, n in s.values())  # fmt: skip


def test_a_flagged_row_records_the_decision():
    row = {"haystack_has_duplicate_image": True, "ambiguous_needles": 0,
           "needles_with_twin_in_haystack": 1, "needles": [{"image_index": None}],
           "is_positive": False, "num_images": 2, "grid": 2}  # fmt: skip
    reasons = {d["reason"] for d in sample_decisions(row)}
    assert reasons == {"DUPLICATE_IMAGE_IN_HAYSTACK", "NEEDLE_TWIN_IN_HAYSTACK"}


# --- bad input ---------------------------------------------------------------------------------------


def refused(argv: list[str], capsys) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    return capsys.readouterr().err


def test_a_missing_stale_or_broken_twins_report_is_refused(sample_coco, tmp_path, capsys):
    captions = sample_coco / "annotations" / "captions_val2014.json"
    plan = ["build", "mmneedle", "plan", "--captions", str(captions), "--out", str(tmp_path / "p")]
    report = tmp_path / "twins.json"
    err = refused([*plan, "--twins", str(tmp_path / "none.json")], capsys)
    assert "twins report not found" in err and "none.json" in err
    assert "run `benchsmith build mmneedle twins` first" in err

    other, images = twin_coco(tmp_path / "other")
    run_twins(other, images, tmp_path)
    err = refused([*plan, "--twins", str(report)], capsys)
    assert "made from another captions file" in err and "rerun" in err
    report.write_text('{"groups": [{"ids": [1]}]}')
    assert "is not a `build mmneedle twins` report" in refused(
        [*plan, "--twins", str(report)], capsys
    )
    assert not (tmp_path / "p").exists()  # nothing half-written


def test_an_undecodable_image_names_its_file(tmp_path, capsys):
    captions, images = twin_coco(tmp_path / "coco", pictures=3)
    victim = sorted(images.glob("*.jpg"))[1]
    victim.write_bytes(b"\xff\xd8\xff not a jpeg")
    argv = ["build", "mmneedle", "twins", "--captions", str(captions), "--images", str(images)]
    err = refused([*argv, "--out", str(tmp_path / "out" / "twins.json")], capsys)
    assert "cannot be decoded" in err and str(victim) in err
    assert not (tmp_path / "out" / "twins.json").exists()
