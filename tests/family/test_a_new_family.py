"""Adding a benchmark family touches its folder, one scorer, one registry line each and its DVC
stages, whose code deps are generated: nothing in the shared layers changes.

A copy of the package gets the toy family of ``toy_family/`` (``builders/toy/``,
``scoring/toy.py``, its card template ``cards/toy.md.j2``) and one line in ``FAMILIES`` and
``SCORERS``. With nothing else changed, the copy builds and publishes it through ``dvc repro``
(with the import tracer on), ``scripts/make_dvc_deps.py`` writes its stages' code deps from
the trace, and the published folder loads with ``load_dataset``, audits, fails the audit when
its source changes, and scores. An edit to another family's folder leaves its stages up to
date; an edit to its own folder reruns them.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import yaml
from fresh_checkout import TRACER, tracked_files

ROOT = Path(__file__).resolve().parents[2]
TOY = Path(__file__).with_name("toy_family")
FAMILY_LINE = '    Entry("toy", "benchsmith.builders.toy.family", "TOY"),\n'
SCORER_LINE = '    Entry("toy", "benchsmith.scoring.toy", "TOY_SCORER"),\n'
PIPELINE = """stages:
  toy_plan:
    cmd: benchsmith build toy plan --questions questions.json --out data/toy/plan.json
    deps:
      - questions.json
      - benchsmith/builders/toy
    outs:
      - data/toy/plan.json
  toy_publish:
    cmd: benchsmith publish toy data/toy/plan.json --out published/toy
    deps:
      - data/toy/plan.json
      - benchsmith/builders/toy
    outs:
      - published/toy
"""
CHECKS = """
import json, sys
import datasets
from benchsmith.cli import main
rows = datasets.load_dataset("published/toy", "questions", split="test")
print("RESULT", json.dumps({"rows": rows.num_rows, "first": rows[0]["question"]}))
with open("preds.jsonl", "w") as out:
    out.write(json.dumps({"id": "q1", "response": "4"}) + "\\n")
    out.write(json.dumps({"id": "q2", "response": "7"}) + "\\n")
codes = {"audit": main(["audit", "published/toy"]),
         "score": main(["score", "published/toy", "--config", "questions",
                        "--predictions", "preds.jsonl"])}
with open("questions.json", "w") as changed:  # a source that changed since the build
    json.dump([{"id": "q1", "question": "2 + 2?", "answer": 5},
               {"id": "q2", "question": "3 + 3?", "answer": 6}], changed)
codes["audit_after_change"] = main(["audit", "published/toy"])
print("RESULT", json.dumps(codes))
"""


def copy_house(to: Path) -> None:
    """The package as installed: ``benchsmith/`` with the templates at ``benchsmith/cards``."""
    for name in tracked_files():
        if name.startswith(("benchsmith/", "cards/")) and (ROOT / name).is_file():
            target = to / ("benchsmith/" + name if name.startswith("cards/") else name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, target)


def add_line(path: Path, line: str) -> None:
    """One registry line, before the registry's closing parenthesis."""
    text = path.read_text(encoding="utf-8")
    assert text.endswith(")\n")
    path.write_text(text[: -len(")\n")] + line + ")\n", encoding="utf-8")


def add_toy(house: Path) -> None:
    shutil.copytree(TOY / "builders" / "toy", house / "benchsmith" / "builders" / "toy")
    shutil.copy2(TOY / "scoring" / "toy.py", house / "benchsmith" / "scoring" / "toy.py")
    shutil.copy2(TOY / "cards" / "toy.md.j2", house / "benchsmith" / "cards" / "toy.md.j2")
    add_line(house / "benchsmith" / "builders" / "__init__.py", FAMILY_LINE)
    add_line(house / "benchsmith" / "scoring" / "__init__.py", SCORER_LINE)


def changed_files(before: Path, after: Path) -> tuple[set[str], set[str]]:
    def files(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes()
                for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}  # fmt: skip

    old, new = files(before), files(after)
    return set(new) - set(old), {n for n in set(old) & set(new) if old[n] != new[n]}


def make_dvc_deps():
    spec = importlib.util.spec_from_file_location(
        "make_dvc_deps", ROOT / "scripts" / "make_dvc_deps.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(house: Path, *command: str, extra: dict[str, str] | None = None):
    env = {**os.environ, "PYTHONPATH": str(house), **(extra or {})}
    return subprocess.run(command, cwd=house, env=env, capture_output=True, text=True, timeout=300)


def test_a_family_added_in_its_folder_builds_publishes_audits_and_scores(tmp_path):
    pristine, house = tmp_path / "pristine", tmp_path / "house"
    copy_house(pristine)
    shutil.copytree(pristine, house)
    add_toy(house)
    added, changed = changed_files(pristine, house)
    assert changed == {"benchsmith/builders/__init__.py", "benchsmith/scoring/__init__.py"}
    assert added == {"benchsmith/builders/toy/__init__.py", "benchsmith/builders/toy/family.py",
                     "benchsmith/scoring/toy.py", "benchsmith/cards/toy.md.j2"}  # fmt: skip

    (house / "questions.json").write_text(json.dumps([
        {"id": "q2", "question": "3 + 3?", "answer": 6},
        {"id": "q1", "question": "2 + 2?", "answer": 4},
    ]), encoding="utf-8")  # fmt: skip
    questions = (house / "questions.json").read_bytes()
    (house / "dvc.yaml").write_text(PIPELINE, encoding="utf-8")
    shutil.copy2(ROOT / ".dvcignore", house / ".dvcignore")  # __pycache__ is no code change
    assert run(house, "git", "init", "-q").returncode == 0
    assert run(house, "dvc", "init", "-q").returncode == 0
    traces = tmp_path / "traces"
    traces.mkdir()
    built = run(house, "dvc", "repro", extra={
        "BENCHSMITH_IMPORT_TRACE": str(traces),
        "PYTHONPATH": os.pathsep.join([str(house), str(TRACER)]),
    })  # fmt: skip
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]

    # the stages' code deps, generated from what each command imported
    by_argv: dict[tuple[str, ...], set[str]] = {}
    for file in traces.glob("*.json"):
        record = json.loads(file.read_text(encoding="utf-8"))
        by_argv.setdefault(tuple(record["argv"]), set()).update(record["files"])
    stages = yaml.safe_load(PIPELINE)["stages"]
    imports = {name: sorted(by_argv[tuple(shlex.split(s["cmd"])[1:])])
               for name, s in stages.items()}  # fmt: skip
    (house / "dvc.yaml").write_text(make_dvc_deps().rendered(PIPELINE, imports), encoding="utf-8")
    deps = {name: [d for d in s["deps"] if d.startswith("benchsmith")]
            for name, s in yaml.safe_load((house / "dvc.yaml").read_text())["stages"].items()}  # fmt: skip
    for name, listed in deps.items():
        assert "benchsmith/builders/toy" in listed and "benchsmith/core" in listed, name
        others = [d for d in listed if d.startswith("benchsmith/builders/") and d not in (
            "benchsmith/builders/toy", "benchsmith/builders/__init__.py")]  # fmt: skip
        assert others == [], f"{name} depends on another family: {others}"
    assert run(house, "dvc", "commit", "-f", "-q").returncode == 0

    checked = run(house, sys.executable, "-c", CHECKS)
    assert checked.returncode == 0, checked.stderr[-3000:]
    results = [line.split(" ", 1)[1] for line in checked.stdout.splitlines()
               if line.startswith("RESULT ")]  # fmt: skip
    loaded, codes = (json.loads(text) for text in results)
    assert loaded == {"rows": 2, "first": "2 + 2?"}  # sorted by id, as the plan writes
    assert codes == {"audit": 0, "score": 0, "audit_after_change": 1}, checked.stderr[-3000:]
    assert '"accuracy": 0.5' in checked.stdout  # q1 right, q2 wrong
    output = checked.stdout + checked.stderr
    assert "source file differs" in output and "questions.json" in output  # names the file

    # an edit to another family's code leaves the toy's stages up to date; its own reruns them
    (house / "questions.json").write_bytes(questions)  # as built
    with (house / "benchsmith" / "builders" / "mmneedle" / "config.py").open("a") as other:
        other.write("# an edit elsewhere\n")
    status = run(house, "dvc", "status", "toy_plan", "toy_publish")
    assert "up to date" in status.stdout, status.stdout
    with (house / "benchsmith" / "builders" / "toy" / "family.py").open("a") as own:
        own.write("# an edit of its own\n")
    status = run(house, "dvc", "status", "toy_plan")
    assert "changed deps" in status.stdout and "benchsmith/builders/toy" in status.stdout
