"""VL-ICL audit: passes on a fresh build, fails naming the file when something differs."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image
from vlicl_fixtures import build_sample_vlicl

from benchsmith.builders.vlicl.family import VLICL
from benchsmith.builders.vlicl.leakage import check_vlicl_leakage
from benchsmith.builders.vlicl.publication import VliclPublication
from benchsmith.core.errors import AuditError, BenchsmithError
from benchsmith.core.hashing import sha256_bytes
from benchsmith.family.audit_report import AuditReport
from benchsmith.publish.audit import audit_dataset
from benchsmith.publish.publisher import publish


@pytest.fixture(scope="module")
def fresh(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("vlicl_audit")
    build, sources = build_sample_vlicl(root)
    check_vlicl_leakage(build)
    publish(VliclPublication(build), root / "published", "1.0.0")
    return {"root": root, "sources": sources, "out": root / "published"}


@pytest.fixture()
def private(fresh, tmp_path) -> dict:
    """A copy of the sources and the published folder that a test may change."""
    sources = tmp_path / "sources"
    shutil.copytree(fresh["root"] / "sources", sources)
    out = tmp_path / "published"
    shutil.copytree(fresh["out"], out)
    roots = {
        "miniimagenet": sources / "miniimagenet",
        "clevr": sources / "clevr" / "CLEVR_v1.0",
        "textocr": sources / "textocr" / "TextOCR",
        "ingest": sources / "vlicl_release" / "VL-ICL",
    }
    return {"sources": sources, "out": out, "roots": roots}


def audit_vlicl(out: Path, roots: dict | None = None, **selection) -> AuditReport:
    roots = {k: str(v) for k, v in (roots or {}).items()}
    return audit_dataset(out, VLICL, roots=roots, **selection)


def shard_rows(out: Path, config: str, split: str) -> tuple[Path, list[dict]]:
    shard = sorted((out / "data" / config).glob(f"{split}-*.parquet"))[0]
    return shard, pq.read_table(shard).to_pylist()


def rewrite(shard: Path, rows: list[dict]) -> None:
    schema = pq.read_schema(shard)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), shard)


def test_audit_of_a_fresh_build_passes(fresh):
    info = json.loads((fresh["out"] / "build_info.json").read_text())
    report = audit_vlicl(fresh["out"])
    assert report.ok, report.render()
    rows = sum(c[s]["published"] for c in info["counts"].values() for s in ("support", "query"))
    episodes = sum(info["configs"]["episodes"][s]["num_examples"] for s in ("hashed", "legacy"))
    assert report.rows_checked == rows + episodes
    assert report.count("rebuild", "build re-run from the recorded sources and parameters") == 1
    assert report.count("rows", "row(s) equal their re-derivation in every column") == (
        rows + episodes
    )
    shards = sum(len(s["files"]) for c in info["configs"].values() for s in c.values())
    assert report.count("shards", "shard(s) match the content hash in their name") == shards
    text = report.render()
    assert text.startswith("audit all configs: OK")


def test_a_modified_source_image_fails_naming_the_file(fresh, private):
    _, rows = shard_rows(fresh["out"], "open_mi", "query")
    [source] = rows[0]["provenance"]["sources"]  # the image's name is its content hash
    victim = private["roots"]["miniimagenet"] / source["file"]
    with Image.open(victim) as image:
        changed = image.copy()
    changed.putpixel((0, 0), (0, 0, 0))
    changed.save(victim, "JPEG", quality=90)
    report = audit_vlicl(private["out"], private["roots"])
    assert not report.ok
    assert any("source file differs" in f and str(victim) in f for f in report.failures)
    # reported once, however many rows use the file; those rows are not re-derived
    assert sum(str(victim) in f for f in report.failures) == 1
    assert report.count("skipped", "row(s) not re-derived: a source file differs") >= 1
    assert not any("not published" in f for f in report.failures)  # skipped is not missing
    victim.unlink()
    report = audit_vlicl(private["out"], private["roots"], configs=["open_mi"])
    assert f"source file missing: {victim}" in report.render()


def test_a_wrong_clevr_answer_is_named_with_the_recounted_value(private):
    shard, rows = shard_rows(private["out"], "clevr", "query")
    rows[1]["count"] += 1
    rows[1]["answer"] = str(rows[1]["count"])
    rewrite(shard, rows)
    report = audit_vlicl(private["out"], private["roots"], configs=["clevr"])
    recount = rows[1]["count"] - 1
    answer = (
        f"{rows[1]['id']} [answer]: differs from the re-derived row (published "
        f"'{rows[1]['answer']}', re-derived '{recount}')"
    )
    count = (
        f"{rows[1]['id']} [count]: differs from the re-derived row (published "
        f"{rows[1]['count']}, re-derived {recount})"
    )
    assert answer in report.failures and count in report.failures
    assert any(
        "does not match the hash in its name" in f and str(shard) in f for f in report.failures
    )


def test_a_textocr_word_changed_in_the_source_is_named_once(private):
    """The audit re-reads the TextOCR annotations and re-draws the boxes: a word changed in the
    annotations file is named as the changed source, once."""
    _, rows = shard_rows(private["out"], "textocr", "query")
    row = rows[0]
    path = private["roots"]["textocr"] / "TextOCR_0.1_val.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["anns"][row["ann_id"]]["utf8_string"] = "FORGED"
    path.write_text(json.dumps(document), encoding="utf-8")
    report = audit_vlicl(private["out"], private["roots"], configs=["textocr"])
    # the changed file is the finding, once; the rows citing it are not re-derived, nor are
    # they called unpublished
    assert [f for f in report.failures if str(path) in f] == [
        f for f in report.failures if "source file differs" in f
    ]
    assert len(report.failures) == 1 and "sha256" in report.failures[0]
    assert report.count("skipped", "row(s) not re-derived: a source file differs") == 4


def test_an_operator_image_that_does_not_re_render_fails(private):
    shard, rows = shard_rows(private["out"], "operator_induction", "query")
    buffer = io.BytesIO()
    Image.new("RGB", (256, 256), "white").save(buffer, "PNG")
    fake = buffer.getvalue()
    rows[0]["images"][0]["bytes"] = fake
    for source in rows[0]["provenance"]["sources"]:
        source["sha256"] = sha256_bytes(fake)  # consistent provenance, wrong pixels
    rewrite(shard, rows)
    report = audit_vlicl(
        private["out"], private["roots"], configs=["operator_induction"], ids=[rows[0]["id"]]
    )
    assert report.rows_checked == 1
    named = {f.split("]")[0] + "]" for f in report.failures if f.startswith(rows[0]["id"])}
    assert named == {f"{rows[0]['id']} [images]", f"{rows[0]['id']} [provenance]"}
    assert any("at images[0].bytes" in f for f in report.failures)


def test_a_different_font_is_reported_not_silently_accepted(private):
    info_path = private["out"] / "build_info.json"
    info = json.loads(info_path.read_text())
    info["font"]["sha256"] = "0" * 64
    info_path.write_text(json.dumps(info))
    report = audit_vlicl(private["out"], private["roots"], configs=["operator_induction"])
    assert not report.ok and all("operator font differs" in f for f in report.failures)


def test_bad_arguments_are_audit_errors(fresh, tmp_path):
    with pytest.raises(BenchsmithError, match="no build_info.json"):
        audit_vlicl(tmp_path)
    with pytest.raises(AuditError, match="available"):
        audit_vlicl(fresh["out"], configs=["no_such_task"])
    with pytest.raises(AuditError, match=r"row id\(s\) \['clevr/query/99999'\] not in"):
        audit_vlicl(fresh["out"], ids=["clevr/query/99999"])
    mmneedle_like = tmp_path / "other"
    mmneedle_like.mkdir()
    (mmneedle_like / "build_info.json").write_text(json.dumps({"family": "mmneedle"}))
    with pytest.raises(AuditError, match="is not 'vlicl'"):
        audit_vlicl(mmneedle_like)
