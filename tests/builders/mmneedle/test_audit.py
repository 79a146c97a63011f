"""`benchsmith audit`: passes on an intact build, names the file when something differs."""

from __future__ import annotations

import json
import shutil

import pytest

from benchsmith.cli import main


@pytest.fixture()
def copy_of_build(built, tmp_path):
    """A private copy of the published folder and of the COCO sources it points to."""
    coco = tmp_path / "coco"
    shutil.copytree(built["coco"], coco)
    published = tmp_path / "published"
    shutil.copytree(built["published"], published)
    return published, coco


def audit(published, coco, *args):
    """`benchsmith audit` of the private copy, with its sources at their new place."""
    roots = ["--root", f"captions={coco / 'annotations' / 'captions_val2014.json'}"]
    return main(["audit", str(published), *args, *roots, "--root", f"images={coco / 'val2014'}"])


def test_audit_of_an_intact_sample_and_haystack_passes(built, capsys):
    assert main(["audit", str(built["published"]), "--config", "m10_n2_k2", "--id", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("audit m10_n2_k2/1: OK")
    # the sample and the 10 stitched images of its haystack, every column re-derived
    assert "11 row(s) equal their re-derivation in every column" in out
    assert (
        main(["audit", str(built["published"]), "--config", "haystacks_n8", "--id", "n8-00004"])
        == 0
    )
    assert "65 file(s) match their recorded sha256" in capsys.readouterr().out  # cells, captions


def test_audit_of_the_whole_dataset_checks_every_row_once(built, capsys):
    assert main(["audit", str(built["published"])]) == 0
    out = capsys.readouterr().out
    info = json.loads((built["published"] / "build_info.json").read_text())
    rows = sum(s["num_examples"] for c in info["configs"].values() for s in c.values())
    stitched = sum(info["configs"][f"haystacks_n{g}"]["test"]["num_examples"] for g in (1, 2, 4, 8))
    assert out.startswith("audit all configs: OK")
    assert f"{rows} row(s) checked" in out
    assert f"{rows} row(s) equal their re-derivation in every column" in out
    assert f"{len(info['configs'])} shard(s) match the content hash in their name" in out
    assert stitched == 4 * 20


def test_audit_names_a_changed_source_file(copy_of_build, capsys):
    published, coco = copy_of_build
    assert audit(published, coco, "--config", "haystacks_n2", "--id", "n2-00000") == 0
    capsys.readouterr()
    import pyarrow.parquet as pq

    shard = next((published / "data" / "haystacks_n2").glob("test-*.parquet"))
    first = pq.read_table(shard).slice(0, 1).to_pylist()[0]
    victim = coco / "val2014" / first["cells"][2]["file_name"]
    victim.write_bytes(victim.read_bytes() + b"\x00")
    assert audit(published, coco, "--config", "haystacks_n2", "--id", "n2-00000") == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and str(victim) in out and "differs" in out
    victim.unlink()
    assert audit(published, coco, "--config", "haystacks_n2", "--id", "n2-00000") == 1
    assert f"source file missing: {victim}" in capsys.readouterr().out


def test_audit_names_the_dataset_folder_when_a_re_render_differs(copy_of_build, capsys):
    published, coco = copy_of_build
    info = json.loads((published / "build_info.json").read_text())
    info["params"]["render"]["jpeg_quality"] = 90  # claims other settings than the ones used
    (published / "build_info.json").write_text(json.dumps(info))
    assert audit(published, coco, "--config", "m1_n4_k1", "--id", "0") == 1
    out = capsys.readouterr().out
    assert "haystacks_n4/" in out and "[image]: differs from the re-derived row" in out


def test_audit_names_a_caption_that_does_not_match_its_annotation(copy_of_build, capsys):
    published, coco = copy_of_build
    captions = coco / "annotations" / "captions_val2014.json"
    raw = json.loads(captions.read_text())
    for ann in raw["annotations"]:
        ann["caption"] = "something else entirely"
    captions.write_text(json.dumps(raw))
    info = json.loads((published / "build_info.json").read_text())
    assert audit(published, coco, "--config", "m1_n2_k1", "--id", "0") == 1
    out = capsys.readouterr().out
    assert str(captions) in out  # sha256 differs and the caption text differs
    assert info["sources"]["captions"]["sha256"][:12] in out


def test_audit_bad_arguments_exit_2_with_a_message(built, tmp_path, capsys):
    assert main(["audit", str(built["published"]), "--config", "m99_n2_k1", "--id", "0"]) == 2
    assert "available:" in capsys.readouterr().err
    assert main(["audit", str(built["published"]), "--config", "m10_n2_k1", "--id", "12345"]) == 2
    assert "12345" in capsys.readouterr().err
    assert main(["audit", str(tmp_path), "--config", "m10_n2_k1", "--id", "0"]) == 2
    assert "no build_info.json" in capsys.readouterr().err
    assert main(["audit", str(built["published"]), "--root", "clevr=/x"]) == 2
    assert "captions, images" in capsys.readouterr().err
