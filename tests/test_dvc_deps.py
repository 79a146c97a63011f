"""``dvc.yaml`` deps cover what each stage really runs, and keep families apart.

Every stage's command is run in pipeline order on the sample profile under an import tracer
(``tests/import_trace.py``); each benchsmith module it loaded and each card template it read
must lie under one of the stage's ``deps``. A stale build after an edit is exactly a module a
stage imports but does not depend on. And no stage of one family depends on another family's
folder or raw sources, so editing VL-ICL code reruns no MMNeedle stage (and vice versa).
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
TRACER = Path(__file__).with_name("import_trace.py")
FAMILY_CODE = {
    "mmneedle": ("benchsmith/builders/mmneedle", "benchsmith/sources/coco"),
    "vlicl": (
        "benchsmith/builders/vlicl",
        "benchsmith/sources/miniimagenet",
        "benchsmith/sources/clevr",
    ),
    "multi": ("benchsmith/builders/multi", "benchsmith/sources/exams"),
}


def stages() -> dict[str, dict]:
    return yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]


def covered(path: str, deps: list[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in deps)


def test_no_family_stage_depends_on_another_familys_code():
    for name, stage in stages().items():
        family = next((f for f in FAMILY_CODE if name.startswith(f"{f}_")), None)
        if family is None:
            continue
        others = [p for f, paths in FAMILY_CODE.items() if f != family for p in paths]
        # a publish stage depends on the whole package on purpose: every row it writes records
        # code_revision, a digest of all of benchsmith and its cards (core/records.py)
        whole = {"benchsmith", "cards"} if name.endswith("_publish") else set()
        foreign = [
            d
            for d in stage["deps"]
            if d not in whole and (covered(d, others) or any(covered(o, [d]) for o in others))
        ]
        assert not foreign, f"{name} depends on another family's code: {foreign}"


@pytest.fixture(scope="module")
def closures(tmp_path_factory) -> dict[str, list[str]]:
    """Every stage's command, run in pipeline order in a scratch project, with its imports."""
    project = tmp_path_factory.mktemp("deps")
    params = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))
    params["mmneedle"]["sizes"]["sample"] = {"pool_size": 12, "samples_per_config": 4}
    params["mmneedle"]["render"]["workers"] = 1
    (project / "params.yaml").write_text(yaml.safe_dump(params), encoding="utf-8")
    found = {}
    for name, stage in stages().items():
        argv = shlex.split(stage["cmd"])
        assert argv[0] == "benchsmith", f"{name}: commands start with `benchsmith`"
        trace = project / f"{name}.trace"
        result = subprocess.run(
            [sys.executable, str(TRACER), str(trace), *argv],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert result.returncode == 0, f"{name}: {result.stderr[-2000:]}"
        found[name] = trace.read_text(encoding="utf-8").split()
    return found


@pytest.mark.parametrize("name", list(stages()))
def test_stage_deps_cover_every_module_and_template_it_uses(closures, name):
    deps = stages()[name]["deps"]
    used = closures[name]
    assert any(p.startswith("benchsmith/") for p in used)
    missing = [p for p in used if not covered(p, deps)]
    assert not missing, f"stage {name} runs code its deps do not name: {missing}"
    if name.endswith("_publish") or name == "curate":
        assert any(p.startswith("cards/") and p.endswith(".j2") for p in used), name


def test_a_family_command_imports_no_other_family(closures):
    for name, used in closures.items():
        family = next((f for f in FAMILY_CODE if name.startswith(f"{f}_")), None)
        if family is None:
            continue
        others = [p for f, paths in FAMILY_CODE.items() if f != family for p in paths]
        assert not [p for p in used if covered(p, others)], name
