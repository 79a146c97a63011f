"""The suite's schedule names real tests: a renamed or moved file in ``conftest.py``'s lists
would silently lose its place (the build no longer first, a long file no longer early, the
OCR-on-Ray test no longer last in its group with its 0.5 GB worker kept to the end)."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import LAST_ON_RAY, LONGEST_FIRST, STARTS_THE_BUILD

ROOT = Path(__file__).resolve().parents[1]


def test_every_scheduled_file_exists():
    for name in (STARTS_THE_BUILD, *LONGEST_FIRST):
        assert (ROOT / name).is_file(), name


def test_the_tests_put_last_on_ray_exist_and_run_on_ray():
    for nodeid in LAST_ON_RAY:
        file, _, name = nodeid.partition("::")
        tree = ast.parse((ROOT / file).read_text(encoding="utf-8"))
        [function] = [f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == name]
        assert "ray_cluster" in [a.arg for a in function.args.args], nodeid
