"""The README's first command in a fresh checkout at another path, on a machine with Python and
git only: ``dvc repro`` builds and publishes every family, reproduces the committed ``dvc.lock``
byte for byte, re-runs nothing when nothing changed, re-runs only what a parameter touches, and
a bad input fails its stage naming the file with nothing built lost.

One build serves every test here (the ``fresh_checkout`` fixture, :mod:`fresh_checkout`), with
system fonts and ``tesseract`` hidden (:mod:`bare_machine`).
"""

from __future__ import annotations

import json
import subprocess
import warnings
from pathlib import Path

import datasets
import yaml
from fresh_checkout import copy_checkout, pipeline, repro

from benchsmith.core.hashing import sha256_file
from benchsmith.sources.exams.fonts import packaged_font_path

ROOT = Path(__file__).resolve().parents[1]


def test_dvc_repro_in_another_checkout_reproduces_the_committed_lock(fresh_checkout):
    if fresh_checkout.not_bare:  # CI never gets here: there the namespace is required
        warnings.warn(f"built with system fonts and tesseract visible: {fresh_checkout.not_bare}",
                      stacklevel=1)  # fmt: skip
    for stage in pipeline():
        assert f"Running stage '{stage}'" in fresh_checkout.log  # it really rebuilt everything
    committed = (ROOT / "dvc.lock").read_bytes()
    # dvc keeps a removed stage's entry in dvc.lock: the committed lock names only live stages
    locked = set(yaml.safe_load(committed)["stages"])
    assert locked == set(pipeline()), (
        f"dvc.lock names stages dvc.yaml lacks: {locked - set(pipeline())}"
    )
    assert fresh_checkout.lock == committed, "dvc.lock changed:\n" + "\n".join(
        subprocess.run(
            ["diff", str(ROOT / "dvc.lock"), str(fresh_checkout.path / "dvc.lock")],
            capture_output=True,
            text=True,
        ).stdout.splitlines()[:40]  # fmt: skip
    )
    assert len(fresh_checkout.log.splitlines()) < 120  # no JSON dumps in the repro log


def test_every_family_publishes_with_the_pip_installed_ocr_and_font(fresh_checkout):
    project = fresh_checkout.path
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    published = project / "published"
    size = params["mmneedle"]["sizes"]["sample"]["samples_per_config"]
    assert (
        datasets.load_dataset(str(published / "mmneedle"), "m10_n2_k1", split="test").num_rows
        == size
    )
    assert "Duplicate pictures" in (published / "mmneedle" / "README.md").read_text("utf-8")
    for config in ("open_mi", "matching_mi", "clevr", "operator_induction"):
        query = datasets.load_dataset(str(published / "vlicl"), config, split="query")
        assert query.num_rows > 0 and query[0]["images"]
    assert datasets.load_dataset(str(published / "vlicl"), "episodes", split="hashed").num_rows > 0
    jigsaw = datasets.load_dataset(str(published / "mmiu"), "jigsaw_puzzle_solving", split="test")
    assert jigsaw.num_rows == params["mmiu"]["sizes"]["sample"]["items_per_task"]
    exam = datasets.load_dataset(str(published / "multi"), "questions", split="test")
    assert exam.num_rows > 0
    for target in params["curate"]["targets"]:
        assert (published / "curated" / target["name"] / "decisions.parquet").is_file()
    # the scanned pages were drawn with the packaged Noto font and read by RapidOCR
    pages = json.loads((project / "data/sources/exams/pages/pages.json").read_text("utf-8"))
    assert pages["font"]["sha256"] == sha256_file(packaged_font_path())
    assert pages["font"]["face"] == "Noto Sans CJK SC Regular"
    sources = json.loads((project / "data/multi/converted/sources.json").read_text("utf-8"))
    engines = {s["engine"] for s in sources.values() if s["kind"] == "scan"}
    assert len(engines) == 1 and next(iter(engines)).startswith("rapidocr 3.10.0 ")
    report = json.loads((project / "data/multi/converted/report.json").read_text("utf-8"))
    assert report["skipped"] == 0 and report["by_kind"]["scan"] > 0


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def _repro(cwd: Path, *args: str) -> str:
    result = repro(cwd, *args)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def _dvc(cwd: Path, *args: str) -> str:
    result = subprocess.run(["dvc", *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _check_metrics(project: Path, params: dict) -> None:
    """`dvc metrics show` prints one narrow table: a file per family and curation's, the same
    few keys in each, every number equal to what was built (read here from the build's own
    reports); the metrics are then committed, as a user would, so `dvc metrics diff` has a
    base."""
    table = _dvc(project, "metrics", "show")
    assert max(len(line.rstrip()) for line in table.splitlines()) <= 120, table
    shown = json.loads(_dvc(project, "metrics", "show", "--json"))
    files = next(iter(shown.values()))["data"]
    metrics = {path: block["data"] for path, block in files.items()}
    assert set(metrics) == {f"metrics/{name}.json" for name in
                            ("mmneedle", "vlicl", "mmiu", "multi", "curate")}  # fmt: skip

    def published(family: str) -> dict:
        return json.loads((project / "published" / family / "build_info.json").read_text())

    # rows of the configs of samples, those that repeat another's (and MULTI's extend) left out
    samples = {"mmneedle": lambda c: not c.startswith("haystacks_"),
               "vlicl": lambda c: c != "episodes", "mmiu": lambda c: c != "circular",
               "multi": lambda c: c not in ("elite", "extend")}  # extend: knowledge, not questions  # fmt: skip
    for family, is_sample in samples.items():
        info = published(family)
        chosen = [c for c in info["configs"] if is_sample(c)]
        rows = sum(s["num_examples"] for c in chosen for s in info["configs"][c].values())
        assert (metrics[f"metrics/{family}.json"]["rows"],
                metrics[f"metrics/{family}.json"]["configs"]) == (rows, len(chosen)), family  # fmt: skip
    twins = json.loads((project / "data/mmneedle/twins.json").read_text())
    check = json.loads((project / "data/mmneedle/image_check.json").read_text())
    found = sum(b["with_exact_duplicate"] + b["with_near_duplicate_only"]
                for b in check["configs"].values())  # fmt: skip
    assert found == 0  # the plan set the sample's planted twins aside: the pixel check finds none
    needle = metrics["metrics/mmneedle.json"]
    assert needle["duplicates"] == len(twins["groups"]) == 4
    assert needle["removed"] == published("mmneedle")["stats"]["twin_images_set_aside"] > 0
    leakage = json.loads((project / "data/vlicl/leakage.json").read_text())["summary"]
    assert metrics["metrics/vlicl.json"]["removed"] == leakage["removed_queries"]
    assert metrics["metrics/vlicl.json"]["duplicates"] == (
        leakage["exact_pairs"] + leakage["near_pairs"] + leakage["cross_task_duplicates"]
    )
    shortcuts = json.loads((project / "data/mmiu/shortcuts.json").read_text())
    assert shortcuts["failed"] == [] and metrics["metrics/mmiu.json"]["shortcut_lift"] == max(
        r["best_lift"] for r in shortcuts["tasks"].values()
    )
    converted = json.loads((project / "data/multi/converted/report.json").read_text())
    plan = json.loads((project / "data/multi/plan/build_info.json").read_text())
    multi = metrics["metrics/multi.json"]
    assert multi["ocr_cer"] == max(converted["ocr"]["cer"].values())
    assert multi["duplicates"] == plan["near_duplicates"]["pairs"]
    assert multi["removed"] == plan["near_duplicates"]["removed"] + plan["selection"]["dropped"]
    kept = [json.loads((project / "published" / "curated" / t["name"] / "build_info.json")
                       .read_text())["counts"] for t in params["curate"]["targets"]]  # fmt: skip
    curate = metrics["metrics/curate.json"]
    assert (curate["rows"], curate["configs"]) == (sum(k["kept"] for k in kept), len(kept))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "build"], cwd=project, check=True)


def test_a_rerun_does_nothing_a_param_reruns_only_its_stages_and_bad_input_loses_nothing(
    fresh_checkout, tmp_path
):
    project = copy_checkout(fresh_checkout, tmp_path / "project")
    params = yaml.safe_load((project / "params.yaml").read_text(encoding="utf-8"))
    published = project / "published" / "mmneedle"
    built = _snapshot(published)
    everything = _snapshot(project / "published")
    _check_metrics(project, params)

    second = _repro(project)
    assert "Running stage" not in second and "up to date" in second
    assert _snapshot(published) == built
    assert _snapshot(project / "published") == everything

    # A re-encode re-runs the render and publish, never the plan or the source; a MULTI
    # selection parameter re-runs selection and publish, never the OCR (or the split): both
    # edits in one `dvc repro`
    converted = _snapshot(project / "data" / "multi" / "converted")
    params["mmneedle"]["render"]["jpeg_quality"] = 60
    params["multi"]["selection"]["p"] = 0.9
    (project / "params.yaml").write_text(yaml.safe_dump(params))
    third = _repro(project)
    for stage in ("mmneedle_render", "mmneedle_publish", "multi_select", "multi_publish"):
        assert f"Running stage '{stage}'" in third, stage
    for stage in ("coco_source", "mmneedle_twins", "mmneedle_plan", "exams_source", "multi_ocr",
                  "multi_questions", "vlicl_plan", "mmiu_plan"):  # fmt: skip
        assert f"Running stage '{stage}'" not in third, stage
    assert _snapshot(published) != built
    assert _snapshot(project / "data" / "multi" / "converted") == converted
    # a re-encode changes no count: `dvc metrics diff` against the commit shows no MMNeedle change
    diff = json.loads(_dvc(project, "metrics", "diff", "--json"))
    assert not diff.get("metrics/mmneedle.json"), diff

    # A bad input fails its stage with a message naming the file, and loses nothing built.
    built = {
        name: _snapshot(project / name)
        for name in ("published/mmneedle", "data/mmneedle/plan", "data/mmneedle/render")
    }
    captions = project / "data" / "sources" / "coco" / "annotations" / "captions_val2014.json"
    captions.write_text('{"images": [', encoding="utf-8")
    failed = repro(project, "--single-item", "mmneedle_plan", timeout=600)
    assert failed.returncode != 0
    assert (
        "not valid JSON" in failed.stderr + failed.stdout
        and "captions_val2014.json" in failed.stderr + failed.stdout
    )
    assert {name: _snapshot(project / name) for name in built} == built
