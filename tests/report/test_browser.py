"""The report opens in a real browser: headless Chromium renders the page with no console
message and no failed load, and the DOM it built holds every config.

Chromium is Debian's package (``apt install chromium``), which a pip-only machine does not
have: there this test is skipped, and ``test_build.py`` still reads the page's structure
(no script, nothing fetched, every picture decodes) without a browser."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from PIL import Image

from benchsmith.cli import main
from benchsmith.scoring import SCORERS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# a closed network: no background connection, no component update, no sign-in
QUIET = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--enable-logging=stderr", "--v=0"]  # fmt: skip


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (apt install "
                    "chromium); the page's structure is checked without it in test_build.py")  # fmt: skip
def test_the_page_renders_in_headless_chromium_with_no_console_errors(sample_project, tmp_path):
    """A page with the items and a predictions file's breakdown."""
    folder, config = sample_project / "published" / "mmiu", "jigsaw_puzzle_solving"
    run = tmp_path / "run.jsonl"
    rows = SCORERS.get("mmiu").reference_predictions(folder, config)
    run.write_text("".join(json.dumps({**r, "response": "A" if k % 2 else r["response"]}) + "\n"
                           for k, r in enumerate(rows)), encoding="utf-8")  # fmt: skip
    out = tmp_path / "report"
    assert main(["report", str(folder), "--items", "4", "--predictions", f"{config}={run}",
                 "--out", str(out)]) == 0  # fmt: skip
    url = (out / "index.html").resolve().as_uri()
    profile = ["--user-data-dir=" + str(tmp_path / "profile")]
    dom = subprocess.run([CHROMIUM, *QUIET, *profile, "--dump-dom", url], capture_output=True,
                         text=True, timeout=120, check=True)  # fmt: skip
    for shown in (
        "3d_pose_estimation",
        config,
        "Shortcut gate",
        "Predictions",
        "Wrong answers",
        "accuracy per category",
    ):
        assert shown in dom.stdout
    problems = [line for line in dom.stderr.splitlines()
                if "CONSOLE" in line or "Failed to load" in line or "net::ERR" in line]  # fmt: skip
    assert not problems, problems
    shot = tmp_path / "shot.png"
    subprocess.run([CHROMIUM, *QUIET, *profile, "--window-size=1280,1600",
                    f"--screenshot={shot}", url], capture_output=True, timeout=120, check=True)  # fmt: skip
    image = Image.open(shot).convert("L")
    low, high = image.getextrema()
    assert image.size == (1280, 1600) and high - low > 100  # text and charts drawn, not blank
