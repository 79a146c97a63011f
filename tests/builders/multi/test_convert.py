"""The ocr step: crawled HTML and scanned pages to problem records; cached; bad pages skipped."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from benchsmith.builders.multi.convert import OcrSettings, convert_exams


def test_pages_become_release_shaped_problems(multi_build):
    converted = multi_build["converted"]
    problems = json.loads((converted / "problems.json").read_text(encoding="utf-8"))
    sources = json.loads((converted / "sources.json").read_text(encoding="utf-8"))
    report = json.loads((converted / "report.json").read_text(encoding="utf-8"))
    assert report["by_kind"] == {"html": 5, "scan": 16} and report["skipped"] == 0
    html = problems["czsx_html-q0001"]
    content = html["problem_content_list"][0]
    assert content.startswith("如图 [IMAGE_1]，在三角形 ABC 中，<u>M 是 BC 的中点</u>")
    assert "等于（ ）[MASK]\nA. AB$^{2}$\nB. BC$^{2}$" in content  # blank, options, LaTeX
    assert html["problem_answer_list"] == ["A"] and html["education"] == "初中"
    scan = problems["czsx_scan-page001-noisy-q1"]
    lines = scan["problem_content_list"][0].split("\n")
    assert lines[0].startswith("[IMAGE_1]") and lines[0].endswith("（ ）[MASK]")
    assert lines[1:] == ["A. 垂直", "B. 平行", "C. 相等", "D. 无法确定"]
    assert (converted / scan["img_paths"][0]).is_file()
    assert sources["czsx_scan-page001-noisy-q1"]["file"] == "pages/page_001.noisy.png"
    assert set(report["ocr"]["cer"]) == {"clean", "rotated", "blurred", "noisy"}
    assert all(0 <= cer < 0.1 for cer in report["ocr"]["cer"].values())


def test_ocr_is_cached_by_page_and_engine(multi_build, tmp_path):
    settings = OcrSettings(cache_dir=multi_build["cache"])
    report = convert_exams(multi_build["exams"], tmp_path / "again", settings)
    assert (report["ocr"]["read"], report["ocr"]["cached"]) == (0, 8)
    # a warm cache writes the same bytes as the cold first run (dvc.lock must not depend on it)
    for name in ("problems.json", "sources.json", "report.json"):
        assert (tmp_path / "again" / name).read_bytes() == (
            multi_build["converted"] / name).read_bytes()  # fmt: skip


def test_a_changed_page_reader_reads_every_page_again_but_no_image_with_the_engine(
    multi_build, tmp_path, monkeypatch
):
    """After an edit to the reader (its code digest changes), each page goes through the reader
    again, on the engine's reads kept in ``reads/``: an engine that fails on any read proves no
    image was read, and the records are the cold run's, byte for byte."""
    from benchsmith.builders.multi import convert
    from benchsmith.images.ocr import OcrBackend

    real = convert.engine("rapidocr")

    class NoReads(OcrBackend):
        name = real.name

        def version(self):
            return real.version()

        def model_files(self):
            return real.model_files()

        def read(self, image):
            raise AssertionError("the engine read an image it had read before")

    cache = tmp_path / "cache"
    shutil.copytree(multi_build["cache"], cache)
    monkeypatch.setattr(convert, "reader_digest", lambda: "an edited reader")
    monkeypatch.setattr(convert, "engine", lambda name: NoReads())
    report = convert_exams(multi_build["exams"], tmp_path / "again", OcrSettings(cache_dir=cache))
    assert (report["ocr"]["read"], report["ocr"]["cached"]) == (8, 0)
    for name in ("problems.json", "sources.json", "report.json"):
        assert (tmp_path / "again" / name).read_bytes() == (
            multi_build["converted"] / name).read_bytes()  # fmt: skip


def test_bad_pages_are_counted_skips_and_the_rest_is_kept(multi_build, tmp_path):
    exams = tmp_path / "exams"
    shutil.copytree(multi_build["exams"], exams, ignore=shutil.ignore_patterns("release"))
    page = exams / "pages" / "page_002.noisy.png"
    page.write_bytes(page.read_bytes()[:300])  # truncated scan
    (exams / "pages" / "page_003.clean.png").write_bytes(Path(page).read_bytes()[:10])
    blank = exams / "pages" / "page_004.clean.png"
    from PIL import Image

    Image.new("L", (400, 300), 255).save(blank)  # OCR finds nothing
    (exams / "html" / "q_0004.html").write_bytes(b"<p>4. \xff\xfe broken</p>")  # not UTF-8
    (exams / "html" / "q_0003.html").write_text(
        (exams / "html" / "q_0003.html").read_text("utf-8").replace("circle.png", "gone.png"),
        encoding="utf-8")  # fmt: skip
    key = json.loads((exams / "html" / "answer_key.json").read_text("utf-8"))
    del key["q_0005"]
    (exams / "html" / "answer_key.json").write_text(json.dumps(key), encoding="utf-8")
    report = convert_exams(exams, tmp_path / "out", OcrSettings(cache_dir=multi_build["cache"]))
    reasons = {(s["file"].split("#")[0], s["reason"]) for s in report["skips"]}
    details = {s["file"]: s["detail"] for s in report["skips"]}
    assert "gone.png" in details["html/q_0003.html"]
    assert reasons == {
        ("pages/page_002.noisy.png", "PAGE_NOT_READ"),
        ("pages/page_003.clean.png", "PAGE_NOT_READ"),
        ("pages/page_004.clean.png", "PAGE_NOT_READ"),
        ("html/q_0004.html", "PAGE_NOT_CONVERTED"),
        ("html/q_0003.html", "PAGE_NOT_CONVERTED"),
        ("html/q_0005.html", "NO_ANSWER_KEY"),
    }
    assert report["by_kind"] == {"html": 2, "scan": 14}  # everything else converted


def test_pages_read_on_ray_give_the_same_records(ray_cluster, multi_build, tmp_path):
    """A page read again by a Ray task, the seven others from the local run's OCR cache: the
    converted folder is the one the local run wrote, byte for byte. (One page, not all eight:
    each is a whole OCR on a Ray worker, which then keeps RapidOCR's models, about 0.5 GB, until
    the local Ray stops; what is checked is that a Ray worker reads a page as the local run did
    and that its records come back in place, between pages read from the cache.)"""
    from benchsmith.cli import main

    cache = tmp_path / "cache"
    shutil.copytree(multi_build["cache"], cache)
    shutil.rmtree(cache / "reads")  # the engine's own reads: gone, so the engine runs on Ray
    entries = sorted(cache.rglob("*.json"))
    assert len(entries) == 8  # two sample pages in four variants
    forgotten = {p.relative_to(cache): p.read_bytes() for p in entries[3:4]}  # one, mid-way
    for relative in forgotten:
        (cache / relative).unlink()
    out = tmp_path / "converted"
    argv = ["build", "multi", "ocr", "--exams", str(multi_build["exams"]), "--executor", "ray",
            "--workers", "1", "--cache", str(cache), "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    # really read on Ray, not cached, and read to the same bytes the local run cached
    assert {r: (cache / r).read_bytes() for r in forgotten} == forgotten
    local = multi_build["converted"]
    mine = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    theirs = {p.relative_to(local): p.read_bytes() for p in local.rglob("*") if p.is_file()}
    assert mine == theirs


def test_an_engine_that_cannot_run_stops_the_step_with_its_fix_and_keeps_the_last_output(
    multi_build, tmp_path, monkeypatch, capsys
):
    """EasyOCR without its extra or weights (as on any machine that did not set it up): the
    step fails naming what is missing and the engine's own fix, and the converted folder a
    previous run wrote is left as it was."""
    from benchsmith.cli import main

    monkeypatch.delenv("EASYOCR_MODULE_PATH", raising=False)
    out = tmp_path / "converted"
    shutil.copytree(multi_build["converted"], out)
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    argv = ["build", "multi", "ocr", "--exams", str(multi_build["exams"]), "--backend", "easyocr",
            "--cache", str(tmp_path / "cache"), "--out", str(out)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "easyocr" in err.splitlines()[0] and "--backend rapidocr" in err
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
