"""Bars: shown where asked, and where they are not shown tqdm is not even imported."""

from __future__ import annotations

import os
import subprocess
import sys

PROGRAM = """
import sys
from benchsmith.core.progress import progress, progress_bar
with progress_bar(total=3, desc="counting") as bar:
    bar.update(2)
    bar.reset(total=4)
    bar.update(4)
bar = progress_bar(total=1, desc="second")
bar.update()
bar.close()
print(sum(progress([1, 2, 3], desc="items")), "tqdm" in sys.modules)
"""


def run(shown: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "BENCHSMITH_PROGRESS": shown}
    return subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                          env=env, timeout=60, check=True)  # fmt: skip


def test_bars_not_shown_do_everything_a_bar_does_without_tqdm():
    done = run("0")
    assert done.stdout.split() == ["6", "False"]
    assert done.stderr == ""


def test_bars_shown_are_tqdms_on_stderr():
    done = run("1")
    assert done.stdout.split() == ["6", "True"]
    assert "counting" in done.stderr and "0/4" in done.stderr and "items" in done.stderr
