"""The project as a new user gets it: a fresh checkout at another path, built by ``dvc repro``
once per test run (whatever the number of workers), on a bare machine, with every stage's
imports traced.

The checkout is the project's files as git sees them now (tracked and not ignored), so the
tests hold the committed ``dvc.lock`` to the code it sits beside. ``dvc repro`` runs there with
system fonts and ``tesseract`` hidden (:mod:`bare_machine`) and with :mod:`stage_tracer` on
``PYTHONPATH``, so one build answers three questions: does it reproduce the committed lock byte
for byte, does every family build and publish with pip-installed dependencies alone, and does
each stage's ``deps`` name every module it ran. Tests read it and never change it; a test that
re-runs stages after an edit works on a copy (:func:`copy_checkout`).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml
from bare_machine import bare_command

ROOT = Path(__file__).resolve().parents[1]
TRACER = Path(__file__).with_name("stage_tracer")


def pipeline() -> dict[str, dict]:
    return yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8"))["stages"]


@dataclass(frozen=True)
class FreshCheckout:
    path: Path
    log: str  # what the first `dvc repro` printed on stdout
    errors: str  # ... and on stderr
    lock: bytes  # dvc.lock as that repro left it
    not_bare: str | None  # why system fonts and tesseract could not be hidden (None: hidden)
    imports: dict[str, list[str]]  # stage -> the files its command (and workers) loaded


def tracked_files() -> list[str]:
    result = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, capture_output=True, check=True, timeout=60,
    )  # fmt: skip
    return [name for name in result.stdout.decode().split("\0") if name]


def stage_imports(traces: Path) -> dict[str, list[str]]:
    """Each stage's traced files: the union over the processes that ran its command."""
    by_argv: dict[tuple[str, ...], set[str]] = {}
    for file in traces.glob("*.json"):
        record = json.loads(file.read_text(encoding="utf-8"))
        by_argv.setdefault(tuple(record["argv"]), set()).update(record["files"])
    found = {}
    for name, stage in pipeline().items():
        argv = tuple(shlex.split(stage["cmd"])[1:])
        assert argv in by_argv, f"stage {name}: no trace of `{stage['cmd']}`"
        found[name] = sorted(by_argv[argv])
    return found


def repro(checkout: Path, *args: str, env: dict[str, str] | None = None,
          timeout: int = 900) -> subprocess.CompletedProcess:  # fmt: skip
    return subprocess.run(["dvc", "repro", *args], cwd=checkout, capture_output=True, text=True,
                          timeout=timeout, env=env)  # fmt: skip


RECORD = "fresh_checkout.json"  # what the build printed and traced, beside the checkout


def build_fresh_checkout(work: Path) -> None:
    """Copy the project to ``work/somewhere/else/benchsmith`` and run ``dvc repro`` there;
    what it printed and each stage's imports go to ``work/fresh_checkout.json``
    (:func:`load_fresh_checkout` reads them, in any worker)."""
    checkout = work / "somewhere" / "else" / "benchsmith"
    for name in tracked_files():
        source = ROOT / name
        if source.is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, checkout / name)
    subprocess.run(["git", "init", "-q"], cwd=checkout, check=True, timeout=60)
    traces = work / "traces"
    traces.mkdir()
    command, extra, not_bare = bare_command(["dvc", "repro"])
    env = {**os.environ, **extra, "BENCHSMITH_IMPORT_TRACE": str(traces),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(TRACER),
                                                       os.environ.get("PYTHONPATH")]))}  # fmt: skip
    result = subprocess.run(command, cwd=checkout, capture_output=True, text=True, timeout=900,
                            env=env)  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    record = {"log": result.stdout, "errors": result.stderr, "not_bare": not_bare,
              "imports": stage_imports(traces)}  # fmt: skip
    (work / RECORD).write_text(json.dumps(record), encoding="utf-8")


def load_fresh_checkout(work: Path) -> FreshCheckout:
    record = json.loads((work / RECORD).read_text(encoding="utf-8"))
    checkout = work / "somewhere" / "else" / "benchsmith"
    return FreshCheckout(checkout, record["log"], record["errors"],
                         (checkout / "dvc.lock").read_bytes(), record["not_bare"],
                         record["imports"])  # fmt: skip


def copy_checkout(fresh: FreshCheckout, to: Path) -> Path:
    """A copy of the built checkout (outputs, DVC cache and state) to change and re-run."""
    shutil.copytree(fresh.path, to, symlinks=True)
    return to
