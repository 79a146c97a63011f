"""``dvc.yaml`` deps cover what each stage really runs, and keep families apart.

Every stage's command runs in the fresh checkout's ``dvc repro`` (the ``fresh_checkout``
fixture) with an import tracer loaded into each ``benchsmith`` process
(``tests/stage_tracer/sitecustomize.py``); each benchsmith module it loaded and each card template
it read must lie under one of the stage's ``deps``. A stale build after an edit is exactly a
module a stage imports but does not depend on. And no stage of one family depends on another
family's folder or raw sources, so editing VL-ICL code reruns no MMNeedle stage (and vice versa).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
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


@pytest.mark.parametrize("name", list(stages()))
def test_stage_deps_cover_every_module_and_template_it_uses(fresh_checkout, name):
    deps = stages()[name]["deps"]
    used = fresh_checkout.imports[name]
    assert any(p.startswith("benchsmith/") for p in used)
    missing = [p for p in used if not covered(p, deps)]
    assert not missing, f"stage {name} runs code its deps do not name: {missing}"
    if name.endswith("_publish") or name == "curate":
        assert any(p.startswith("cards/") and p.endswith(".j2") for p in used), name


def test_a_family_command_imports_no_other_family(fresh_checkout):
    for name, used in fresh_checkout.imports.items():
        family = next((f for f in FAMILY_CODE if name.startswith(f"{f}_")), None)
        if family is None:
            continue
        others = [p for f, paths in FAMILY_CODE.items() if f != family for p in paths]
        assert not [p for p in used if covered(p, others)], name


def test_the_code_deps_are_what_the_trace_writes(fresh_checkout):
    """``dvc.yaml``'s code deps are generated (``scripts/make_dvc_deps.py``): a module a stage
    loads and does not list, an entry another entry covers, or an unsorted list fails here."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_dvc_deps",
                                                  ROOT / "scripts" / "make_dvc_deps.py")  # fmt: skip
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = (ROOT / "dvc.yaml").read_text(encoding="utf-8")
    assert module.rendered(text, fresh_checkout.imports) == text, (
        "run: python scripts/make_dvc_deps.py"
    )
    # the rule itself: a family's and a source's own folder, the ground floor, files elsewhere
    assert module.code_deps([], ["benchsmith/core/hashing.py", "benchsmith/cli.py",
                                 "benchsmith/builders/mmiu/tasks/jigsaw.py",
                                 "benchsmith/sources/exams/fonts.py", "cards/multi.md.j2",
                                 "data/sources/x.json"]) == [
        "benchsmith/builders/mmiu", "benchsmith/cli.py", "benchsmith/core",
        "benchsmith/sources/exams", "cards/multi.md.j2"]  # fmt: skip
    assert module.code_deps(["benchsmith/sources/fetching", "benchsmith/core/rng.py"],
                            ["benchsmith/core/rng.py"]) == [
        "benchsmith/core", "benchsmith/sources/fetching"]  # fmt: skip
