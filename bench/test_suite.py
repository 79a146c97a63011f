"""The README's test command: its wall time, CPU time and peak memory, beside the same suite run
serially, in one run.

Why: a contributor runs the suite between two edits, and CI runs it on 2 cores. Targets: the
README's command under 5 minutes on 2 cores, and the whole process tree (pytest, its workers,
every subprocess a test starts) under 3 GiB of PSS at its peak. The baseline is the same tests
in one process (``-p no:xdist``), what the command was before it ran on workers; the ratio says
what the workers buy. Both runs print pytest's ten slowest steps.

Run ``python bench/test_suite.py`` (~16 minutes: both runs) or ``--quick`` (the README's command
only); the result goes to ``bench/results/test_suite.json``.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
from pathlib import Path
from typing import Any

from process_tree import run_measured
from synthetic_coco import machine_info, print_table, write_result

NAME = "test_suite"
ROOT = Path(__file__).resolve().parents[1]
TARGET_S, TARGET_MIB = 5 * 60, 3 * 1024


def readme_test_command() -> list[str]:
    """The second command of the README's first code block (the first one builds)."""
    block = re.search(r"```bash\n(.*?)```", (ROOT / "README.md").read_text("utf-8"), re.S)
    assert block, "README.md has no ```bash block"
    line = block.group(1).strip().splitlines()[1]
    return shlex.split(line.split("#", 1)[0])


def without_workers(command: list[str]) -> list[str]:
    """``command`` with its ``-n N`` / ``-nN`` / ``--numprocesses N`` left out."""
    out, skip = [], False
    for word in command:
        if skip:
            skip = False
        elif word in ("-n", "--numprocesses"):
            skip = True
        elif not (
            word.startswith("-n") and word[2:].isdigit() or word.startswith("--numprocesses=")
        ):
            out.append(word)
    return out


def run_suite(name: str, command: list[str]) -> dict[str, Any]:
    argv = [sys.executable if command[0] == "python" else command[0], *command[1:],
            "--durations=10", "-p", "no:cacheprovider"]  # fmt: skip
    print(f"{name}: {shlex.join(command)} ...", flush=True)
    measured = run_measured(argv, env={**os.environ, "CI": "true"}, cwd=ROOT, every_s=2.0)
    summary = next((line for line in reversed(measured.stdout.splitlines())
                    if re.search(r"\d+ (passed|failed)", line)), "")  # fmt: skip
    slowest = re.findall(r"^(\d+\.\d+)s (call|setup|teardown)\s+(\S+)$", measured.stdout, re.M)
    problems = re.findall(r"^((?:FAILED|ERROR) \S+)", measured.stdout, re.M)
    result = {
        "command": shlex.join(command),
        "returncode": measured.returncode,
        "summary": summary.strip("= "),
        "wall_s": round(measured.wall_s, 1),
        "cpu_s": round(measured.cpu_s, 1),
        "peak_tree_pss_mib": round(measured.peak_tree_pss_mib),
        "peak_tree_anon_mib": round(measured.peak_tree_anon_mib),
        "slowest": [{"s": float(s), "when": when, "test": test} for s, when, test in slowest],
        "failed": problems,
        "at_peak": [{"pss_mib": round(m), "command": c} for m, c in measured.at_peak if m >= 20],
    }
    print(f"  {result['summary']}: {result['wall_s']} s wall, {result['cpu_s']} s CPU, "
          f"peak tree PSS {result['peak_tree_pss_mib']} MiB", flush=True)  # fmt: skip
    for problem in problems:
        print(f"  {problem}")
    print("  at the peak:", ", ".join(f"{p['pss_mib']} MiB {p['command'][:70]}"
                                     for p in result["at_peak"][:8]), flush=True)  # fmt: skip
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the README's command only")
    args = parser.parse_args()
    command = readme_test_command()
    runs = {"readme": run_suite("README command", command)}
    if not args.quick:
        runs["serial"] = run_suite("serial baseline", [*without_workers(command), "-p", "no:xdist"])
    readme = runs["readme"]
    result: dict[str, Any] = {
        "machine": machine_info(),
        "cores": os.cpu_count(),
        "runs": runs,
        "targets": {
            "wall_s": TARGET_S,
            "peak_tree_pss_mib": TARGET_MIB,
            "wall_met": readme["wall_s"] < TARGET_S and readme["returncode"] == 0,
            "memory_met": readme["peak_tree_pss_mib"] < TARGET_MIB,
        },
    }
    if "serial" in runs:
        result["serial_over_readme_wall"] = round(runs["serial"]["wall_s"] / readme["wall_s"], 2)
    print_table(
        ["run", "wall s", "CPU s", "peak tree PSS MiB", "result"],
        [[name, r["wall_s"], r["cpu_s"], r["peak_tree_pss_mib"], r["summary"]]
         for name, r in runs.items()],
    )  # fmt: skip
    for name, run in runs.items():
        print(f"\n{name}: slowest")
        print_table(["s", "when", "test"], [[s["s"], s["when"], s["test"]] for s in run["slowest"]])
    targets = result["targets"]
    print(f"\ntargets: wall < {TARGET_S} s {'met' if targets['wall_met'] else 'MISSED'}, "
          f"peak < {TARGET_MIB} MiB {'met' if targets['memory_met'] else 'MISSED'}"
          + (f"; serial / README wall {result['serial_over_readme_wall']}x"
             if "serial" in runs else ""))  # fmt: skip
    print("->", write_result(NAME, result))


if __name__ == "__main__":
    main()
