"""The published folder: loads offline with `datasets`, card, build info, provenance, caching."""

from __future__ import annotations

import hashlib
import json
import shutil

import datasets
import pytest
from huggingface_hub import DatasetCard

from benchsmith.builders.mmneedle.config import RenderConfig
from benchsmith.builders.mmneedle.publication import MmneedlePublication
from benchsmith.builders.mmneedle.reader import load_sample_with_images
from benchsmith.builders.mmneedle.render import render_mmneedle
from benchsmith.core.errors import BenchsmithError
from benchsmith.publish.publisher import publish


def test_every_config_loads_offline_with_load_dataset(built):
    out = built["published"]
    samples = datasets.load_dataset(str(out), "m10_n2_k1", split="test")
    assert samples.num_rows == 10
    assert set(samples.column_names) >= {
        "sample_id",
        "haystack",
        "is_positive",
        "needles",
        "gold_answer",
        "prompt",
        "provenance",
    }
    assert isinstance(samples.features["needles"], datasets.List)
    haystacks = datasets.load_dataset(str(out), "haystacks_n4", split="test")
    assert haystacks.num_rows == 20 and haystacks[0]["image"].size == (1024, 1024)
    configs = datasets.get_dataset_config_names(str(out))
    assert len(configs) == 25 and "m1_n2_k5" in configs and "haystacks_n1" in configs


def test_card_metadata_and_build_info(built):
    out = built["published"]
    card = DatasetCard.load(out / "README.md")
    data = card.data.to_dict()
    assert data["version"] == "1.2.3"
    assert len(data["configs"]) == 25 and len(data["dataset_info"]) == 25
    assert {c["config_name"] for c in data["configs"] if c.get("default")} == {"m10_n2_k1"}
    assert "CC BY 4.0" in card.text and "Flickr" in card.text and "v1.2.3" in card.text
    info = json.loads((out / "build_info.json").read_text())
    assert info["version"] == "1.2.3" and info["family"] == "mmneedle"
    assert info["libraries"]["pillow"] and "libjpeg" in info["libraries"]
    captions_sha = hashlib.sha256(built["captions"].read_bytes()).hexdigest()
    assert info["sources"]["captions"]["sha256"] == captions_sha
    assert info["sources"]["images"]["count"] == 660  # every sample image is used somewhere
    assert len(info["sources"]["images"]["manifest_sha256"]) == 64
    assert len(info["params_hash"]) == 64 and info["params"]["render"]["jpeg_quality"] == 75
    assert info["configs"]["m10_n8_k5"]["test"]["num_examples"] == 10


def test_every_row_carries_verifiable_provenance(built):
    out = built["published"]
    samples = datasets.load_dataset(str(out), "m10_n2_k2", split="test")
    images_dir = built["coco"] / "val2014"
    for row in samples:
        prov = row["provenance"]
        assert (
            prov["family"] == "mmneedle"
            and prov["seed"] == 0
            and prov["code_revision"].startswith("benchsmith==")
        )
        files = [s for s in prov["sources"] if s["file"].startswith("val2014/")]
        assert {int(s["id"]) for s in files} == {n["coco_image_id"] for n in row["needles"]}
        for source in files:
            assert (
                source["sha256"]
                == hashlib.sha256(
                    (images_dir / source["file"].split("/", 1)[1]).read_bytes()
                ).hexdigest()
            )
            assert source["license"] and source["url"]
        captions = [s for s in prov["sources"] if s["id"].startswith("caption/")]
        assert {int(s["id"].split("/")[1]) for s in captions} == {
            n["caption_id"] for n in row["needles"]
        }
        assert all(s["license"] == "CC BY 4.0" for s in captions)
    stitched = datasets.load_dataset(str(out), "haystacks_n2", split="test")[0]
    assert [int(s["id"]) for s in stitched["provenance"]["sources"]] == [
        c["coco_image_id"] for c in stitched["cells"]
    ]


def test_sample_helper_returns_the_haystack_images(built):
    sample = load_sample_with_images(built["published"], "m10_n4_k1", 3)
    assert len(sample["images"]) == 10 and all(im.size == (1024, 1024) for im in sample["images"])
    assert sample["gold_answer"] and sample["prompt"].endswith(sample["needles"][0]["caption"])
    with pytest.raises(BenchsmithError, match="not in config"):
        load_sample_with_images(built["published"], "m10_n4_k1", 999)


def test_republishing_is_deterministic(built, tmp_path):
    publish(MmneedlePublication(built["plan"], built["render"]), tmp_path / "again", "1.2.3")
    names = sorted(
        p.relative_to(built["published"]).as_posix() for p in built["published"].rglob("*.parquet")
    )
    assert names == sorted(
        p.relative_to(tmp_path / "again").as_posix()
        for p in (tmp_path / "again").rglob("*.parquet")
    )
    assert (built["published"] / "README.md").read_text() == (
        tmp_path / "again" / "README.md"
    ).read_text()


def test_a_rebuild_is_never_served_from_a_stale_cache(built, tmp_path):
    out = tmp_path / "published"
    cache = tmp_path / "hf_cache"
    publish(MmneedlePublication(built["plan"], built["render"]), out, "1.0.0")
    first = datasets.load_dataset(str(out), "haystacks_n2", split="test", cache_dir=str(cache))[0][
        "image"
    ].tobytes()
    old_names = {p.name for p in (out / "data" / "haystacks_n2").iterdir()}
    render2 = tmp_path / "render_q20"
    render_mmneedle(built["plan"], render2, RenderConfig(jpeg_quality=20, workers=1))
    publish(MmneedlePublication(built["plan"], render2), out, "1.0.1")
    new_names = {p.name for p in (out / "data" / "haystacks_n2").iterdir()}
    assert old_names.isdisjoint(new_names)
    second = datasets.load_dataset(str(out), "haystacks_n2", split="test", cache_dir=str(cache))[0][
        "image"
    ].tobytes()
    assert first != second


def test_a_failed_publish_leaves_the_previous_dataset_intact(built, tmp_path):
    out = tmp_path / "published"
    publish(MmneedlePublication(built["plan"], built["render"]), out, "1.0.0")
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    wrong_render = tmp_path / "render"
    shutil.copytree(built["render"], wrong_render)
    info = json.loads((wrong_render / "render_info.json").read_text())
    info["plan_fingerprint"] = "0" * 64
    (wrong_render / "render_info.json").write_text(json.dumps(info))
    with pytest.raises(BenchsmithError, match="different plan"):
        publish(MmneedlePublication(built["plan"], wrong_render), out, "2.0.0")
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before


def test_publishing_loads_neither_the_render_pool_nor_numba():
    """Publishing checks that the render came from the plan and never renders: importing it
    must not import the render pool, whose import has every later fork server of the process
    load (or, where the package was just installed, compile) the numba kernels."""
    import subprocess
    import sys

    code = ("import sys, benchsmith.builders.mmneedle.publication\n"
            "print(sorted(m for m in sys.modules if m == 'numba' or 'render' in m))")  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, timeout=120)  # fmt: skip
    assert done.stdout.strip() == "[]"


@pytest.mark.parametrize("damage", ["image as text", "an id not in the plan", "a missing image"])
def test_a_damaged_stitched_file_is_refused_naming_it_and_nothing_is_published(
    built, tmp_path, damage
):
    """The haystacks take the render's image column as it is, so its columns and ids are
    checked first: a clear error naming the file, never a dataset of wrong bytes."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    render = tmp_path / "render"
    shutil.copytree(built["render"], render)
    path = render / "stitched" / "n2.parquet"
    table = pq.read_table(path)
    if damage == "image as text":
        texts = pa.array([data.hex() for data in table.column("image").to_pylist()], pa.string())
        table = table.set_column(1, "image", texts)
    elif damage == "an id not in the plan":
        ids = table.column("stitched_id").to_pylist()
        table = table.set_column(0, "stitched_id", pa.array(["n2-not-planned", *ids[1:]]))
    else:
        images = table.column("image").to_pylist()
        table = table.set_column(1, "image", pa.array([None, *images[1:]], pa.binary()))
    pq.write_table(table, path)
    expected = "columns are not the render's" if damage == "image as text" else "does not match"
    with pytest.raises(BenchsmithError, match=expected) as error:
        publish(MmneedlePublication(built["plan"], render), tmp_path / "published", "1.0.0")
    assert str(error.value.path) == str(path)
    assert not (tmp_path / "published").exists()
