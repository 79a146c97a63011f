"""The compiled canonical sampler and the column-built tables against the plain-Python rules.

``tests/mmneedle_plan_reference.py`` is the planner written one sample and one row at a time
with sets, counters and NumPy's own generator. The fast path must give the same samples (every
array, every counter) and the same parquet bytes, on a full-size pool (all 40,504 COCO val
images with their real captions) and on small sources built to reach the rare branches.
"""

from __future__ import annotations

import gzip
import io
import json
from collections import Counter
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from mmneedle_plan_reference import (
    reference_pool_rows,
    reference_sample_rows,
    reference_samples,
)

from benchsmith.builders.mmneedle.candidates import Candidates
from benchsmith.builders.mmneedle.canonical import canonical_samples
from benchsmith.builders.mmneedle.config import PlanConfig, Setting
from benchsmith.builders.mmneedle.plan import (
    POOL_SCHEMA,
    SAMPLE_SCHEMA,
    plan_mmneedle,
    pool_frame,
    sample_frame,
)
from benchsmith.builders.mmneedle.pools import build_pool
from benchsmith.core.errors import PlanError
from benchsmith.sources.coco.reader import read_captions

FIXTURES = Path(__file__).parents[2] / "fixtures"
GENERIC = [f"A photo of {thing}." for thing in ("a street", "a room", "food", "animals", "people")]


def _write_captions(path: Path, images: list[tuple[int, str]], captions: list[list[str]]) -> Path:
    data = {
        "images": [
            {"id": image_id, "file_name": name, "license": 1, "width": 640, "height": 480}
            for image_id, name in images
        ],
        "annotations": [
            {"id": 7 * k + j + 1, "image_id": image_id, "caption": text}
            for k, ((image_id, _), texts) in enumerate(zip(images, captions, strict=True))
            for j, text in enumerate(texts)
        ],
        "licenses": [{"id": 1, "name": "Attribution License", "url": ""}],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def full_size(tmp_path_factory) -> Candidates:
    """All 40,504 COCO val images, each with its real (last listed) caption, the same text
    respaced and upper-cased (equal once normalised), one of five generic captions shared by
    thousands of images, and a unique variant: four captions, three distinct texts."""
    with gzip.open(FIXTURES / "coco_val2014_last_captions.jsonl.gz", "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    captions = [
        [r["caption"], "  " + r["caption"].upper(), GENERIC[k % 5], f"{r['caption']} ({k})"]
        for k, r in enumerate(rows)
    ]
    path = tmp_path_factory.mktemp("full") / "captions_val2014.json"
    _write_captions(path, [(r["image_id"], r["file_name"]) for r in rows], captions)
    return Candidates.from_captions(read_captions(path), "canonical")


def _assert_same(setting: Setting, pool, cands, n_samples: int, seed: int) -> Counter:
    fast_stats, reference_stats = Counter(), Counter()
    fast = canonical_samples(setting, pool, cands, n_samples, seed, fast_stats)
    reference = reference_samples(setting, pool, cands, n_samples, seed, reference_stats)
    for field in ("haystack", "candidate", "caption", "slot"):
        np.testing.assert_array_equal(
            getattr(fast, field), getattr(reference, field), err_msg=f"{setting.name} {field}"
        )
    assert fast_stats == reference_stats - Counter(exhaustive_fallback=10**9), setting.name
    return reference_stats


def test_full_size_pool_gives_the_reference_samples_in_every_config(full_size):
    config = PlanConfig(pool_size=10_000, samples_per_config=160, seed=5)
    pools = {g: build_pool("canonical", len(full_size), g, 10_000, 5) for g in config.grids}
    seen = Counter()
    for setting in config.settings():
        seen += _assert_same(setting, pools[setting.grid], full_size, 160, config.seed)
    # m1_n2_k5 has 4 slots for 5 needles: each of its 80 positives gets one absent extra
    assert seen["positive_needles_made_absent"] == 80
    assert len(full_size) == 40_504


def test_rare_branches_match_the_reference(tmp_path):
    """5,000 images share the same three captions and one image has its own: every positive
    is ambiguous, and negatives mostly miss the one free image in 200 draws and fall back to
    the exhaustive permutation; asking for two absent needles cannot be met at all."""
    n = 5_001
    images = [(100 + k, f"COCO_val2014_{100 + k:012d}.jpg") for k in range(n)]
    captions = [["A dog.", "A cat.", "A bus."] for _ in range(n - 1)] + [["A lone heron."]]
    cands = Candidates.from_captions(
        read_captions(_write_captions(tmp_path / "c.json", images, captions)), "canonical"
    )
    pool = build_pool("canonical", len(cands), 1, 1_000, 0)
    stats = _assert_same(Setting(10, 1, 1), pool, cands, 40, 0)
    assert stats["positive_caption_ambiguous"] == 20
    assert stats["exhaustive_fallback"] >= 10
    with pytest.raises(PlanError, match="not enough COCO images outside a haystack"):
        canonical_samples(Setting(10, 1, 2), pool, cands, 40, 0, Counter())


@pytest.mark.parametrize("order", ["canonical", "legacy"])
def test_tables_are_the_reference_rows_byte_for_byte(sample_coco, order):
    source = read_captions(sample_coco / "annotations" / "captions_val2014.json")
    plan = plan_mmneedle(source, PlanConfig(order=order, pool_size=20, samples_per_config=12))
    for setting in plan.config.settings():
        frame = sample_frame(plan, setting)
        rows = reference_sample_rows(plan, setting)
        assert frame.to_dicts() == rows, setting.name
        assert _parquet(frame) == _parquet(pl.DataFrame(rows, schema=SAMPLE_SCHEMA))
    for grid in plan.pools:
        rows = reference_pool_rows(plan, grid)
        assert pool_frame(plan, grid).to_dicts() == rows
        assert _parquet(pool_frame(plan, grid)) == _parquet(pl.DataFrame(rows, schema=POOL_SCHEMA))


def test_threads_do_not_change_the_plan(sample_coco):
    source = read_captions(sample_coco / "annotations" / "captions_val2014.json")
    config = PlanConfig(pool_size=20, samples_per_config=12)
    one, two = plan_mmneedle(source, config, workers=1), plan_mmneedle(source, config, workers=3)
    assert one.stats == two.stats
    for name, samples in one.samples.items():
        np.testing.assert_array_equal(samples.candidate, two.samples[name].candidate)
        np.testing.assert_array_equal(samples.haystack, two.samples[name].haystack)


def _parquet(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    return buffer.getvalue()
