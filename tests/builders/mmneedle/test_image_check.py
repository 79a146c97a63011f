"""Pixel-level duplicate check of an MMNeedle plan: exact and near duplicates inside haystacks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from card_markdown import card_tables
from curate_fixtures import jpeg_bytes, texture

from benchsmith.builders.mmneedle.image_check import check_mmneedle_images
from benchsmith.cli import main
from benchsmith.core.errors import SourceError
from benchsmith.images.hashes import hash_image
from benchsmith.sources.coco.sample import sample_image_specs

CONFIG = "m10_n2_k1"


# --- what the plan says, read independently of the checker ----------------------------------


def pool_cells(plan: Path, grid: int) -> dict[str, list[int]]:
    frame = pl.read_parquet(plan / "pools" / f"n{grid}.parquet", columns=["stitched_id", "cells"])
    return {sid: [c["coco_image_id"] for c in cells] for sid, cells in frame.iter_rows()}


def all_cells(plan: Path) -> dict[str, list[int]]:
    cells: dict[str, list[int]] = {}
    for path in (plan / "pools").glob("n*.parquet"):
        cells.update(pool_cells(plan, int(path.stem[1:])))
    return cells


def haystack_ids(plan: Path, config: str) -> dict[str, list[int]]:
    frame = pl.read_parquet(
        plan / "samples" / f"{config}.parquet", columns=["sample_id", "haystack"]
    )
    cells = all_cells(plan)
    return {
        str(i): [c for sid in haystack for c in cells[sid]] for i, haystack in frame.iter_rows()
    }


def file_names(plan: Path) -> dict[int, str]:
    frame = pl.read_parquet(plan / "images.parquet", columns=["coco_image_id", "file_name"])
    return dict(frame.iter_rows())


def containing(groups: dict[str, list[int]], ids: set[int]) -> set[str]:
    return {key for key, members in groups.items() if ids <= set(members)}


def planted_pairs() -> dict[str, list[set[int]]]:
    """The sample's planted duplicates by kind: pairs of COCO ids showing one picture."""
    pairs: dict[str, list[set[int]]] = {"exact": [], "near": []}
    for spec in sample_image_specs(660):
        if spec.copy_of:
            pairs[spec.copy_kind].append({spec.image_id, spec.copy_of})
    return pairs


@pytest.fixture()
def images(built, tmp_path) -> Path:
    """A writable copy of the sample COCO images without the planted duplicates (each copy
    gets a picture of its own), so a test plants exactly the duplicates it counts."""
    folder = Path(shutil.copytree(built["coco"] / "val2014", tmp_path / "val2014"))
    for spec in sample_image_specs(660):
        if spec.copy_of:
            (folder / spec.file_name).write_bytes(jpeg_bytes(texture(spec.image_id), quality=95))
    return folder


def check(built, images: Path, near_threshold: int = 4) -> dict:
    return check_mmneedle_images(built["plan"], images, near_threshold)


# --- (a) the sample build ----------------------------------------------------------------------


def test_the_sample_build_finds_exactly_the_planted_duplicates(built):
    """The sample COCO holds one picture under two ids with identical pixels and three
    re-encoded ones: every stitched image and haystack holding both ids of a pair is found,
    and nothing else (the scenes' textured ground keeps other pictures apart in pHash)."""
    report = check(built, built["coco"] / "val2014")
    names = file_names(built["plan"])
    assert report["source_images"] == len(names)
    pairs = planted_pairs()
    used = [pair for pair in pairs["exact"] if pair <= set(names)]
    assert report["identical_pixel_groups"] == [sorted(pair) for pair in used]
    assert report["identical_pixel_group_count"] == len(used)

    def expected(groups: dict[str, list[int]]) -> tuple[int, int]:
        exact = set().union(*(containing(groups, pair) for pair in pairs["exact"]))
        near = set().union(*(containing(groups, pair) for pair in pairs["near"])) - exact
        return len(exact), len(near)

    for grid, block in report["stitched"].items():
        cells = pool_cells(built["plan"], int(grid[1:]))
        assert block["total"] == len(cells)
        assert (block["with_exact_duplicate"], block["with_near_duplicate_only"]) == expected(
            cells
        ), grid
    samples = sorted(p.stem for p in (built["plan"] / "samples").glob("*.parquet"))
    assert sorted(report["configs"]) == samples
    found = 0
    for name, block in report["configs"].items():
        assert block["total"] == 10
        counts = (block["with_exact_duplicate"], block["with_near_duplicate_only"])
        assert counts == expected(haystack_ids(built["plan"], name)), name
        found += sum(counts)
    assert found > 0  # the sample build really exercises the search
    # a scene has structure: its perceptual hash is informative, so near matching applies
    some_file = next(iter(names.values()))
    assert not hash_image((built["coco"] / "val2014" / some_file).read_bytes()).low_information


# --- (b) the same picture under two ids ---------------------------------------------------------


def test_the_same_picture_under_two_ids_is_an_exact_duplicate(built, images):
    names = file_names(built["plan"])
    stitched = pool_cells(built["plan"], 2)
    target = sorted(stitched)[0]
    first, second = stitched[target][:2]
    (images / names[second]).write_bytes((images / names[first]).read_bytes())
    report = check(built, images)
    assert sorted([first, second]) in report["identical_pixel_groups"]
    assert report["identical_pixel_group_count"] == 1
    n2 = report["stitched"]["n2"]
    expected = containing(stitched, {first, second})
    assert target in expected
    assert n2["with_exact_duplicate"] == len(expected) and n2["with_near_duplicate_only"] == 0
    example = next(e for e in n2["examples"] if e["id"] == target)
    assert example["kind"] == "exact"
    assert set(example["positions"]) == {0, 1}  # the first two cells of that stitched image
    assert sorted(example["coco_image_ids"]) == sorted([first, second])
    for name, block in report["configs"].items():
        expected = containing(haystack_ids(built["plan"], name), {first, second})
        assert block["with_exact_duplicate"] == len(expected), name
        assert {e["id"] for e in block["examples"]} <= expected
    assert report["configs"][CONFIG]["with_exact_duplicate"] >= 1  # n2-00000 is in haystacks


def test_two_stitched_images_of_one_haystack_sharing_a_picture(built, images):
    """The haystack check sees duplicates the per-stitched-image check cannot."""
    names = file_names(built["plan"])
    haystacks = haystack_ids(built["plan"], CONFIG)
    frame = pl.read_parquet(built["plan"] / "samples" / f"{CONFIG}.parquet")
    haystack = frame.row(0, named=True)["haystack"]
    stitched = pool_cells(built["plan"], 2)
    first, second = stitched[haystack[0]][0], stitched[haystack[1]][0]
    (images / names[second]).write_bytes((images / names[first]).read_bytes())
    report = check(built, images)
    expected = containing(haystacks, {first, second})
    assert "0" in expected
    assert report["configs"][CONFIG]["with_exact_duplicate"] == len(expected)
    assert report["stitched"]["n2"]["with_exact_duplicate"] == len(
        containing(stitched, {first, second})
    )


# --- (c) a re-encoded picture under another id --------------------------------------------------


def test_a_jpeg_re_encode_is_a_near_duplicate(built, images):
    names = file_names(built["plan"])
    stitched = pool_cells(built["plan"], 2)
    target = sorted(stitched)[1]
    a, b, c = stitched[target][:3]
    picture = texture(77, size=64)
    (images / names[a]).write_bytes(jpeg_bytes(picture, quality=95))
    (images / names[b]).write_bytes(jpeg_bytes(picture, quality=60))
    (images / names[c]).write_bytes(jpeg_bytes(texture(78, size=64), quality=95))  # unrelated
    report = check(built, images)
    assert report["identical_pixel_group_count"] == 0  # lossy: the pixels differ
    n2 = report["stitched"]["n2"]
    assert n2["with_exact_duplicate"] == 0
    assert n2["with_near_duplicate_only"] == len(containing(stitched, {a, b}))
    [example] = [e for e in n2["examples"] if e["id"] == target]  # c matches nothing
    assert example["kind"] == "near" and set(example["positions"]) == {0, 1}
    assert sorted(example["coco_image_ids"]) == sorted([a, b])
    assert 0 <= example["distance"] <= report["near_threshold"]
    config = report["configs"][CONFIG]
    assert config["with_near_duplicate_only"] == len(
        containing(haystack_ids(built["plan"], CONFIG), {a, b})
    )
    assert config["with_exact_duplicate"] == 0


# --- (d) unreadable sources ----------------------------------------------------------------------


def test_missing_or_corrupt_images_name_the_file(built, images):
    names = file_names(built["plan"])
    image_id, name = sorted(names.items())[3]
    (images / name).unlink()
    with pytest.raises(SourceError) as info:
        check(built, images)
    assert name in str(info.value) and "missing" in str(info.value)
    (images / name).write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    with pytest.raises(SourceError) as info:
        check(built, images)
    message = str(info.value)
    assert "cannot be decoded" in message and str(image_id) in message
    assert str(images / name) in message


# --- (e) the CLI and the card ---------------------------------------------------------------------


def test_cli_report_goes_into_the_published_card(built, images, tmp_path, capsys):
    names = file_names(built["plan"])
    first, second = pool_cells(built["plan"], 2)[sorted(pool_cells(built["plan"], 2))[0]][:2]
    (images / names[second]).write_bytes((images / names[first]).read_bytes())
    params = tmp_path / "params.yaml"
    params.write_text("mmneedle:\n  image_check:\n    near_threshold: 2\n", encoding="utf-8")
    report_path = tmp_path / "reports" / "image_check.json"
    base = [
        "build",
        "mmneedle",
        "check-images",
        str(built["plan"]),
        "--images",
        str(images),
    ]
    assert main([*base, "--params", str(params), "--out", str(report_path)]) == 0
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["near_threshold"] == 2  # from the params file
    assert report == json.loads(json.dumps(check(built, images, 2)))
    assert (
        main([*base, "--near-threshold", "3", "--params", str(params), "--out", str(report_path)])
        == 0
    )
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["near_threshold"] == 3  # the flag wins
    capsys.readouterr()

    out = tmp_path / "published"
    publish = [
        "publish",
        "mmneedle",
        str(built["plan"]),
        "--render",
        str(built["render"]),
        "--version",
        "1.2.4",
        "--lock",
        str(tmp_path / "no-lock.json"),
        "--params",
        str(params),
        "--out",
        str(out),
    ]
    assert main([*publish, "--image-check", str(report_path)]) == 0
    info = json.loads((out / "build_info.json").read_text(encoding="utf-8"))
    assert info["image_check"] == report
    card = (out / "README.md").read_text(encoding="utf-8")
    tables = card_tables(card)  # both duplicate tables render whole (haystack rows included)
    assert any(row[0] == "stitched `n2`" for table in tables for row in table)
    section = card.split("Duplicate pictures", 1)[1].split("\n## ", 1)[0].split("\n### ", 1)[0]
    words = " ".join(section.split())
    assert f"hashed the {report['source_images']} source images" in words
    assert "Hamming distance <= 3" in words
    block = report["configs"][CONFIG]
    assert block["with_exact_duplicate"] >= 1
    assert f"| `{CONFIG}` | {block['total']} | {block['with_exact_duplicate']} | 0 |" in section
    n2 = report["stitched"]["n2"]
    assert n2["with_exact_duplicate"] >= 1
    assert f"| stitched `n2` | {n2['total']} | {n2['with_exact_duplicate']} | 0 |" in section

    plain = tmp_path / "plain"
    assert main([*publish[:-1], str(plain)]) == 0
    assert "Duplicate pictures" not in (plain / "README.md").read_text(encoding="utf-8")
    assert (
        json.loads((plain / "build_info.json").read_text(encoding="utf-8"))["image_check"] is None
    )
