"""`dvc repro` end to end on the sample profile, in a scratch copy of the project."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import datasets
import yaml

ROOT = Path(__file__).resolve().parents[1]


def _repro(cwd: Path) -> str:
    result = subprocess.run(["dvc", "repro"], cwd=cwd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout + result.stderr


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }


def _dvc(cwd: Path, *args: str) -> str:
    result = subprocess.run(["dvc", *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def _check_metrics(project: Path, params: dict) -> None:
    """`dvc metrics show` reads the counts of every checked stage, equal to what was built;
    the metrics are then committed, as a user would, so `dvc metrics diff` has a base."""
    shown = json.loads(_dvc(project, "metrics", "show", "--json"))
    files = next(iter(shown.values()))["data"]
    metrics = {path: block["data"] for path, block in files.items()}
    assert set(metrics) == {
        "metrics/mmneedle_image_check.json",
        "metrics/vlicl_leakage.json",
        "metrics/mmiu_shortcuts.json",
        "metrics/multi_ocr.json",
        "metrics/multi_select.json",
        "metrics/curate.json",
    }
    converted = json.loads((project / "data/multi/converted/report.json").read_text())
    assert metrics["metrics/multi_ocr.json"]["problems"] == converted["problems"]
    assert metrics["metrics/multi_ocr.json"]["cer"] == converted["ocr"]["cer"]
    plan = json.loads((project / "data/multi/plan/build_info.json").read_text())
    assert metrics["metrics/multi_select.json"]["counts"] == plan["counts"]
    report = json.loads((project / "data/mmneedle/image_check.json").read_text())
    check = metrics["metrics/mmneedle_image_check.json"]
    assert check["source_images"] == report["source_images"]
    assert check["haystacks"]["total"] == sum(b["total"] for b in report["configs"].values())
    leakage = json.loads((project / "data/vlicl/leakage.json").read_text())
    assert metrics["metrics/vlicl_leakage.json"] == leakage["summary"]
    shortcuts = json.loads((project / "data/mmiu/shortcuts.json").read_text())
    gate = metrics["metrics/mmiu_shortcuts.json"]
    assert gate["failed"] == len(shortcuts["failed"]) == 0
    assert gate["best_lift"] == {t: r["best_lift"] for t, r in shortcuts["tasks"].items()}
    for target in params["curate"]["targets"]:
        out = project / "published" / "curated" / target["name"]
        info = json.loads((out / "build_info.json").read_text())
        counts = metrics["metrics/curate.json"][target["name"]]
        assert (counts["source"], counts["kept"]) == (
            info["counts"]["source"],
            info["counts"]["kept"],
        )
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    subprocess.run([*git, "commit", "-qm", "build"], cwd=project, check=True)


def test_dvc_repro_builds_reruns_nothing_and_reruns_only_what_a_param_touches(tmp_path):
    project = tmp_path / "project"
    project.mkdir()
    for name in ("dvc.yaml", ".dvcignore"):
        shutil.copy(ROOT / name, project / name)
    shutil.copytree(
        ROOT / ".dvc",
        project / ".dvc",
        ignore=shutil.ignore_patterns("tmp", "cache", "config.local"),
    )
    shutil.copytree(ROOT / "cards", project / "cards")
    shutil.copytree(
        ROOT / "benchsmith", project / "benchsmith", ignore=shutil.ignore_patterns("__pycache__")
    )
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    assert params["profile"] == "sample"
    params["mmneedle"]["sizes"]["sample"] = {"pool_size": 12, "samples_per_config": 4}
    params["mmneedle"]["render"]["workers"] = 1
    (project / "params.yaml").write_text(yaml.safe_dump(params))
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)

    first = _repro(project)
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    for stage in stages:
        assert f"Running stage '{stage}'" in first
    published = project / "published" / "mmneedle"
    rows = datasets.load_dataset(str(published), "m10_n2_k1", split="test")
    assert rows.num_rows == 4
    assert "Duplicate pictures" in (published / "README.md").read_text(encoding="utf-8")
    vlicl = project / "published" / "vlicl"
    for config in ("open_mi", "matching_mi", "clevr", "operator_induction"):
        query = datasets.load_dataset(str(vlicl), config, split="query")
        assert query.num_rows > 0 and query[0]["images"]
    assert datasets.load_dataset(str(vlicl), "episodes", split="hashed").num_rows > 0
    for target in params["curate"]["targets"]:
        assert (project / "published" / "curated" / target["name"] / "decisions.parquet").is_file()
    built = _snapshot(published)
    everything = _snapshot(project / "published")
    _check_metrics(project, params)

    second = _repro(project)
    assert "Running stage" not in second and "up to date" in second
    assert _snapshot(published) == built
    assert _snapshot(project / "published") == everything

    params["mmneedle"]["render"]["jpeg_quality"] = 60
    (project / "params.yaml").write_text(yaml.safe_dump(params))
    third = _repro(project)
    assert (
        "Running stage 'mmneedle_render'" in third and "Running stage 'mmneedle_publish'" in third
    )
    assert (
        "Running stage 'mmneedle_plan'" not in third and "Running stage 'coco_source'" not in third
    )
    assert _snapshot(published) != built
    # a re-encode changes no count: `dvc metrics diff` against the commit shows no change
    diff = json.loads(_dvc(project, "metrics", "diff", "--json"))
    assert diff == {} or all(not changes for changes in diff.values()), diff

    # A MULTI selection parameter re-runs selection and publish, never the OCR (or the split)
    converted = _snapshot(project / "data" / "multi" / "converted")
    params["multi"]["selection"]["p"] = 0.9
    (project / "params.yaml").write_text(yaml.safe_dump(params))
    fourth = _repro(project)
    assert "Running stage 'multi_select'" in fourth and "Running stage 'multi_publish'" in fourth
    assert "Running stage 'multi_ocr'" not in fourth
    assert "Running stage 'multi_questions'" not in fourth
    assert _snapshot(project / "data" / "multi" / "converted") == converted

    # A bad input fails its stage with a message naming the file, and loses nothing built.
    built = {
        name: _snapshot(project / name)
        for name in ("published/mmneedle", "data/mmneedle/plan", "data/mmneedle/render")
    }
    captions = project / "data" / "sources" / "coco" / "annotations" / "captions_val2014.json"
    captions.write_text('{"images": [', encoding="utf-8")
    failed = subprocess.run(
        ["dvc", "repro", "--single-item", "mmneedle_plan"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert failed.returncode != 0
    assert (
        "not valid JSON" in failed.stderr + failed.stdout
        and "captions_val2014.json" in failed.stderr + failed.stdout
    )
    assert {name: _snapshot(project / name) for name in built} == built
