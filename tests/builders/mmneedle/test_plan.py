"""The MMNeedle plan: settings, canonical guarantees, determinism, legacy replay, bad input."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import polars as pl
import pytest

from benchsmith.builders.mmneedle.config import PlanConfig
from benchsmith.builders.mmneedle.plan import plan_mmneedle, write_plan
from benchsmith.cli import main
from benchsmith.core.errors import PlanError
from benchsmith.sources.coco.reader import normalize_caption, read_captions
from tests.conftest import write_reference_captions


def _tables(plan_dir: Path) -> tuple[dict[int, dict[str, list[int]]], dict[str, pl.DataFrame]]:
    pools = {}
    for path in (plan_dir / "pools").glob("n*.parquet"):
        frame = pl.read_parquet(path)
        pools[int(path.stem[1:])] = {
            r["stitched_id"]: [c["coco_image_id"] for c in r["cells"]] for r in frame.to_dicts()
        }
    samples = {p.stem: pl.read_parquet(p) for p in (plan_dir / "samples").glob("*.parquet")}
    return pools, samples


def _all_captions(captions_path: Path) -> dict[int, set[str]]:
    raw = json.loads(captions_path.read_text(encoding="utf-8"))
    out: dict[int, set[str]] = {}
    for ann in raw["annotations"]:
        out.setdefault(ann["image_id"], set()).add(normalize_caption(ann["caption"]))
    return out


def test_default_settings_are_the_papers_21_configs(built):
    pools, samples = _tables(built["plan"])
    assert sorted(pools) == [1, 2, 4, 8]
    expected = {f"m{m}_n{n}_k{k}" for m in (1, 10) for n in (1, 2, 4, 8) for k in (1, 2, 5)} - {
        "m1_n1_k1",
        "m1_n1_k2",
        "m1_n1_k5",
    }
    assert set(samples) == expected and len(samples) == 21
    for grid, pool in pools.items():
        assert len(pool) == 20
        assert all(
            len(cells) == grid * grid and len(set(cells)) == grid * grid for cells in pool.values()
        )


def test_canonical_guarantees_hold_for_every_sample(built):
    pools, samples = _tables(built["plan"])
    captions = _all_captions(built["captions"])
    for name, frame in samples.items():
        for row in frame.to_dicts():
            grid = row["grid"]
            cells = [cid for sid in row["haystack"] for cid in pools[grid][sid]]
            assert len(row["haystack"]) == row["num_images"]
            assert len(cells) == len(set(cells)), (
                f"{name}/{row['sample_id']}: COCO image repeated in haystack"
            )
            needle_ids = [n["coco_image_id"] for n in row["needles"]]
            assert len(needle_ids) == len(set(needle_ids)) == row["num_needles"]
            assert row["is_positive"] == (row["sample_id"] < 5)
            haystack_norms = set().union(*(captions[c] for c in cells))
            for needle in row["needles"]:
                if needle["image_index"] is None:
                    assert needle["coco_image_id"] not in cells
                    assert normalize_caption(needle["caption"]) not in haystack_norms
                else:  # the labelled cell holds the needle image (1-based, row-major)
                    sid = row["haystack"][needle["image_index"] - 1]
                    cell = (needle["row"] - 1) * grid + (needle["col"] - 1)
                    assert pools[grid][sid][cell] == needle["coco_image_id"]
                    others = set().union(
                        *(captions[c] for c in cells if c != needle["coco_image_id"])
                    )
                    assert normalize_caption(needle["caption"]) not in others
            if not row["is_positive"]:
                assert row["gold_answer"] == "; ".join(["-1"] * row["num_needles"])
            assert not row["haystack_has_duplicate_image"] and row["ambiguous_needles"] == 0


def test_gold_answer_and_prompt_follow_the_original_format(built):
    _, samples = _tables(built["plan"])
    row = samples["m10_n4_k2"].to_dicts()[0]
    parts = [f"{n['image_index']}, {n['row']}, {n['col']}" for n in row["needles"]]
    assert row["gold_answer"] == "; ".join(parts)
    assert row["prompt"].startswith(
        "Given 10 images indexed from 1 to 10, each divided into 4*4 subimages, identify the subimages"
    )
    assert (
        "Respond in the format: index_1, row_1, column_1; index_2, row_2, column_2."
        in row["prompt"]
    )
    assert row["prompt"].endswith(
        f"\nCaption_1: {row['needles'][0]['caption']}\nCaption_2: {row['needles'][1]['caption']}"
    )
    single = samples["m1_n2_k1"].to_dicts()[0]["prompt"]
    assert single.startswith(
        "Given 1 image indexed from 1 to 1, each divided into 2*2 subimages, identify the subimage that"
    )
    assert "If no match is found, respond only with '-1'.\nCaption: " in single
    assert (
        samples["m10_n1_k1"]
        .to_dicts()[0]["prompt"]
        .startswith("Given 10 images indexed from 1 to 10, each divided into 1*1 subimage,")
    )


def test_more_needles_than_slots_become_absent_needles_not_repeats(built):
    _, samples = _tables(built["plan"])
    for row in samples["m1_n2_k5"].filter(pl.col("is_positive")).to_dicts():
        present = [
            (n["image_index"], n["row"], n["col"])
            for n in row["needles"]
            if n["image_index"] is not None
        ]
        assert sorted(present) == [(1, 1, 1), (1, 1, 2), (1, 2, 1), (1, 2, 2)]
        assert sum(n["image_index"] is None for n in row["needles"]) == 1


def _shuffled_copy(captions: Path, out: Path, seed: int) -> Path:
    raw = json.loads(captions.read_text(encoding="utf-8"))
    rng = random.Random(seed)
    rng.shuffle(raw["images"])
    rng.shuffle(raw["annotations"])
    out.write_text(json.dumps(raw, indent=1), encoding="utf-8")
    return out


def test_canonical_plan_is_deterministic_and_independent_of_file_order(built, tmp_path):
    config = PlanConfig(pool_size=12, samples_per_config=6, grids=(2, 4), haystack_sizes=(1, 10))
    outputs = []
    for k, captions in enumerate(
        [
            built["captions"],
            built["captions"],
            _shuffled_copy(built["captions"], tmp_path / "s.json", 7),
        ]
    ):
        source = read_captions(captions)
        write_plan(plan_mmneedle(source, config), source, tmp_path / f"p{k}", None)
        outputs.append(
            {
                p.relative_to(tmp_path / f"p{k}").as_posix(): p.read_bytes()
                for p in (tmp_path / f"p{k}").rglob("*.parquet")
            }
        )
    assert outputs[0] == outputs[1]
    assert outputs[0] == outputs[2]


def test_a_different_seed_gives_a_different_plan(built, tmp_path):
    source = read_captions(built["captions"])
    tables = []
    for seed in (0, 1):
        write_plan(
            plan_mmneedle(
                source,
                PlanConfig(
                    pool_size=5, samples_per_config=4, grids=(2,), haystack_sizes=(1,), seed=seed
                ),
            ),
            source,
            tmp_path / f"p{seed}",
            None,
        )
        tables.append((tmp_path / f"p{seed}" / "pools" / "n2.parquet").read_bytes())
    assert tables[0] != tables[1]


def test_legacy_order_reports_duplicates_and_ambiguities_it_keeps(built, tmp_path):
    source = read_captions(built["captions"])
    info = write_plan(
        plan_mmneedle(source, PlanConfig(order="legacy", pool_size=20, samples_per_config=10)),
        source,
        tmp_path / "legacy",
        None,
    )
    pools, samples = _tables(tmp_path / "legacy")
    for name, frame in samples.items():
        dup = amb = 0
        for row in frame.to_dicts():
            cells = Counter(cid for sid in row["haystack"] for cid in pools[row["grid"]][sid])
            dup += max(cells.values()) > 1
            amb += row["is_positive"] and any(cells[n["coco_image_id"]] > 1 for n in row["needles"])
        assert info["configs"][name]["haystacks_with_duplicate_image"] == dup
        assert info["configs"][name]["ambiguous_gold_answers"] == amb
    # with 20-image pools of 8x8 over 660 images, M=10 haystacks nearly always repeat an image
    assert info["configs"]["m10_n8_k1"]["haystacks_with_duplicate_image"] >= 8
    # legacy keeps slot repeats at (M=1, N=2, K=5): every positive repeats a slot
    assert info["configs"]["m1_n2_k5"]["repeated_needle_slots"] == 5


def test_legacy_order_regenerates_the_official_2x2_pool(tmp_path):
    captions = write_reference_captions(tmp_path / "annotations" / "captions_val2014.json")
    code = main(
        [
            "build",
            "mmneedle",
            "plan",
            "--captions",
            str(captions),
            "--order",
            "legacy",
            "--grids",
            "2",
            "--seed",
            "0",
            "--pool-size",
            "10000",
            "--haystack-sizes",
            "1",
            "--needle-counts",
            "1",
            "--samples",
            "4",
            "--out",
            str(tmp_path / "plan"),
        ]
    )
    assert code == 0
    pool = pl.read_parquet(tmp_path / "plan" / "pools" / "n2.parquet")
    ids = [[c["coco_image_id"] for c in cells] for cells in pool["cells"].to_list()]
    assert len(ids) == 10_000
    assert ids[0] == [350289, 110027, 487421, 364399]
    assert ids[1] == [191112, 267300, 322944, 353231]
    assert ids[9999] == [173004, 456679, 84270, 123580]
    first = pool.row(0, named=True)["cells"]
    assert [(c["row"], c["col"]) for c in first] == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert first[0]["file_name"] == "COCO_val2014_000000350289.jpg"


def test_too_few_images_is_a_clear_plan_error(tmp_path):
    from benchsmith.sources.coco.sample import write_sample_coco

    coco = write_sample_coco(tmp_path / "coco", n_images=40)
    source = read_captions(coco / "annotations" / "captions_val2014.json")
    with pytest.raises(PlanError, match="too few COCO images"):
        plan_mmneedle(source, PlanConfig(grids=(8,), pool_size=2, samples_per_config=2))
    with pytest.raises(PlanError, match="without a shared COCO image"):
        plan_mmneedle(
            source, PlanConfig(grids=(4,), haystack_sizes=(10,), pool_size=20, samples_per_config=2)
        )


def test_plan_cli_reports_skips_and_keeps_earlier_output_on_error(built, tmp_path, capsys):
    raw = json.loads(built["captions"].read_text(encoding="utf-8"))
    orphan = raw["images"][0]["id"]
    raw["annotations"] = [a for a in raw["annotations"] if a["image_id"] != orphan]
    captions = tmp_path / "captions.json"
    captions.write_text(json.dumps(raw), encoding="utf-8")
    out = tmp_path / "plan"
    args = [
        "build",
        "mmneedle",
        "plan",
        "--captions",
        str(captions),
        "--pool-size",
        "4",
        "--samples",
        "2",
        "--grids",
        "2",
        "--haystack-sizes",
        "1",
        "--out",
        str(out),
    ]
    assert main(args) == 0
    assert json.loads((out / "plan_info.json").read_text())["skipped"] == {
        "images_without_captions": 1
    }
    assert "skipped 1 (images without captions)" in capsys.readouterr().err
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    captions.write_text('{"images": [', encoding="utf-8")  # truncated JSON
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "not valid JSON" in err and str(captions) in err and "Traceback" not in err
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_paper_eval_subset_marks_the_samples_the_paper_scored():
    from benchsmith.builders.mmneedle.drafts import in_paper_eval_subset

    one = [i for i in range(10_000) if in_paper_eval_subset(i, 10_000, 1)]
    assert one == list(range(1000)) + list(range(5000, 6000))
    several = [i for i in range(10_000) if in_paper_eval_subset(i, 10_000, 5)]
    assert several == list(range(100)) + list(range(5000, 5100))
    assert all(in_paper_eval_subset(i, 10, 2) for i in range(10))


def test_published_samples_carry_the_paper_subset_flag(built):
    _, samples = _tables(built["plan"])
    assert all(samples["m10_n2_k1"]["paper_eval_subset"].to_list())  # 10 samples: all in it


def test_without_params_yaml_the_plan_has_the_sample_profiles_sizes_and_says_so(
    built, tmp_path, capsys, monkeypatch
):
    """Every family builds the sample profile when no params.yaml is found (MMNeedle used to
    plan the full 21 x 10,000 here), and the log says which sizes it took and why."""
    import yaml

    from benchsmith.cli import main

    monkeypatch.chdir(tmp_path)  # no params.yaml here
    argv = ["build", "mmneedle", "plan", "--captions", str(built["captions"]), "--out", "plan"]
    assert main(argv) == 0
    info = json.loads((tmp_path / "plan" / "plan_info.json").read_text(encoding="utf-8"))
    root = Path(__file__).resolve().parents[3]
    sizes = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))["mmneedle"]["sizes"]
    assert info["plan"]["pool_size"] == sizes["sample"]["pool_size"]
    assert info["plan"]["samples_per_config"] == sizes["sample"]["samples_per_config"]
    assert "no params.yaml here, so the sample profile's sizes" in capsys.readouterr().err
