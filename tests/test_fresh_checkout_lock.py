"""The committed dvc.lock is what `dvc repro` produces in another checkout at another path.

The checkout is the project's files as git sees them now (tracked and not ignored) (so the test holds the lock to the
code it sits beside), copied to a temporary folder; `dvc repro` there must rebuild every stage
and leave dvc.lock byte for byte as committed: no output depends on where the repo lives, on
git, or on the machine's clock.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tracked_files() -> list[str]:
    result = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
        timeout=60,
    )
    return [name for name in result.stdout.decode().split("\0") if name]


def test_dvc_repro_in_another_checkout_reproduces_the_committed_lock(tmp_path):
    checkout = tmp_path / "somewhere" / "else" / "benchsmith"
    for name in _tracked_files():
        source = ROOT / name
        if source.is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, checkout / name)
    subprocess.run(["git", "init", "-q"], cwd=checkout, check=True, timeout=60)
    committed = (checkout / "dvc.lock").read_bytes()
    result = subprocess.run(
        ["dvc", "repro"], cwd=checkout, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "Running stage 'mmneedle_publish'" in result.stdout  # it really rebuilt
    rebuilt = (checkout / "dvc.lock").read_bytes()
    assert rebuilt == committed, "dvc.lock changed:\n" + "\n".join(
        line
        for line in subprocess.run(
            ["diff", str(ROOT / "dvc.lock"), str(checkout / "dvc.lock")],
            capture_output=True,
            text=True,
        ).stdout.splitlines()[:40]
    )
    assert len(result.stdout.splitlines()) < 120  # no JSON dumps in the repro log
