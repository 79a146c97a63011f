"""Every benchmark, one after another, in one run: the figures of ``bench/README.md`` and the
README re-measured together, each beside the baseline its script measures in the same run.

Why: a figure measured on another day, on a machine busier or quieter, with other code, is not
comparable with its neighbours; bench/README.md's tables were measured over a week. This runs
every script in a fresh process, in a fixed order, on one revision, and writes
``bench/results/run_all.json``: the code revision and machine, and per script its command, exit
status, wall time, log file and the result file it wrote (``bench/results/<name>.json``; each
script prints its own baseline and ratio, and its JSON holds them).

Each script's output goes to ``bench/results/run_all/<name>.log``; a summary table is printed
at the end. ``--resume`` skips the scripts that already finished (exit 0) in the previous
``run_all.json`` of the same revision, so a run cut short goes on where it stopped. A run of
some scripts (``--only``, ``--skip``) keeps the other scripts' entries of the same revision. A
``--quick`` run writes ``run_all_quick.json`` and ``run_all_quick/``, never the full run's.

Run ``python bench/run_all.py`` (82 minutes on 2 cores on 2026-11-29, 43 of them the MULTI
near-duplicate search at 1M questions) or ``--quick`` (each script's ``--quick`` mode where it
has one; 17 minutes). ``--only NAME ...`` / ``--skip NAME ...`` choose scripts. The machine
should do nothing else meanwhile.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
RESULTS = BENCH / "results"
SUMMARY = RESULTS / "run_all.json"


@dataclass(frozen=True)
class Script:
    """One benchmark script: its full-size arguments, its quick ones (None: it has no quick
    mode, and runs at full size in a quick run too) and the minutes it takes at full size."""

    name: str
    minutes: float
    full: tuple[str, ...] = ()
    quick: tuple[str, ...] | None = ("--quick",)

    def arguments(self, quick: bool) -> tuple[str, ...]:
        return self.quick if quick and self.quick is not None else self.full


# short ones first, so that a broken script shows early; the suite's own timing last (it runs
# the tests, which would disturb any other benchmark). Minutes: as measured on 2026-11-29.
SCRIPTS = (
    Script("cli_startup", 0.3, quick=None),
    Script("lmms_eval_log_memory", 0.6, quick=None),
    Script("multi_random_baseline", 0.2, quick=None),
    Script("publish_memory", 1.8),
    Script("sens_extraction", 0.4),
    Script("audit_speed", 0.7),
    Script("vlicl_build", 2.5),
    Script("ocr_pages", 1.8),
    Script("near_dup_search", 1.1),
    Script("ray_executor", 8),
    Script("render_throughput", 3.3),
    Script("multi_near_dups", 43),
    Script("mmiu_gate", 0.7),
    Script("plan_speed", 4.2),
    Script("mmneedle_full_build", 4.3, quick=("--scale", "0.1")),
    Script("test_suite", 9),
)


def git_revision() -> str:
    done = subprocess.run(["git", "describe", "--always", "--dirty"], cwd=BENCH.parent,
                          capture_output=True, text=True, check=False)  # fmt: skip
    return done.stdout.strip() or "unknown"


def summary_path(quick: bool) -> Path:
    """Where a run's summary goes: a quick run never replaces the full run's."""
    return RESULTS / "run_all_quick.json" if quick else SUMMARY


def previous_run(revision: str, quick: bool) -> dict[str, dict[str, Any]]:
    """Every script's entry in the last run of this revision and mode, finished or not."""
    try:
        summary = json.loads(summary_path(quick).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if summary.get("git_revision") != revision or summary.get("quick") != quick:
        return {}
    return {s["name"]: s for s in summary.get("scripts", [])}


def run_script(script: Script, quick: bool, logs: Path) -> dict[str, Any]:
    """Run one script in a fresh process; its output to its log, its result file noted."""
    command = [sys.executable, str(BENCH / f"{script.name}.py"), *script.arguments(quick)]
    log = logs / f"{script.name}.log"
    started = time.time()
    with open(log, "w", encoding="utf-8") as handle:
        done = subprocess.run(command, cwd=BENCH.parent, stdout=handle, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL, check=False)  # fmt: skip
    wall = time.time() - started
    # <name>.json, or a variant of it (plan_speed_quick.json, mmneedle_full_build_scaled.json)
    written = sorted(path for path in RESULTS.glob(f"{script.name}*.json")
                     if path.stat().st_mtime >= started)  # fmt: skip
    return {
        "name": script.name,
        "command": command[1:],
        "exit": done.returncode,
        "started": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(started)),
        "wall_s": round(wall, 1),
        "log": str(log.relative_to(BENCH.parent)),
        "results": [str(path.relative_to(BENCH.parent)) for path in written],
    }


def write_summary(summary: dict[str, Any]) -> None:
    path = summary_path(summary["quick"])
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--quick", action="store_true", help="each script's quick mode")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these scripts")
    parser.add_argument("--skip", nargs="+", metavar="NAME", default=[], help="leave these out")
    parser.add_argument("--resume", action="store_true",
                        help="skip scripts that finished in the last run of this revision")  # fmt: skip
    args = parser.parse_args(argv)
    names = {s.name for s in SCRIPTS}
    unknown = sorted((set(args.only or []) | set(args.skip)) - names)
    if unknown:
        parser.error(f"unknown script(s) {', '.join(unknown)}; known: {', '.join(sorted(names))}")
    chosen = [s for s in SCRIPTS
              if (not args.only or s.name in args.only) and s.name not in args.skip]  # fmt: skip
    revision = git_revision()
    previous = previous_run(revision, args.quick)
    done_before = {n: e for n, e in previous.items() if e["exit"] == 0} if args.resume else {}
    # a run of some scripts (--only, --skip) keeps the others' entries of this revision, so
    # re-running one script refreshes its line instead of dropping the rest of the run
    carried = [e for n, e in previous.items() if n in names - {s.name for s in chosen}]
    logs = RESULTS / ("run_all_quick" if args.quick else "run_all")
    logs.mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(BENCH))
    from synthetic_coco import machine_info, print_table

    summary = {
        "git_revision": revision,
        "quick": args.quick,
        "started": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
        "machine": machine_info(),
        "scripts": carried + [done_before[s.name] for s in chosen if s.name in done_before],
    }
    todo = [s for s in chosen if s.name not in done_before]
    expected = sum(s.minutes for s in todo) * (0.3 if args.quick else 1)
    print(f"{len(todo)} script(s) to run (about {expected:.0f} min), {len(done_before)} done "
          f"before; revision {revision}", flush=True)  # fmt: skip
    for index, script in enumerate(todo, 1):
        print(f"[{index}/{len(todo)}] {script.name} {' '.join(script.arguments(args.quick))}",
              flush=True)  # fmt: skip
        entry = run_script(script, args.quick, logs)
        summary["scripts"].append(entry)
        write_summary(summary)  # after each script: a run cut short keeps what it measured
        status = "ok" if entry["exit"] == 0 else f"EXIT {entry['exit']} (see {entry['log']})"
        print(f"    {entry['wall_s']:.0f} s, {status}", flush=True)
    summary["finished"] = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
    write_summary(summary)
    order = {s.name: k for k, s in enumerate(SCRIPTS)}
    rows = [[s["name"], f"{s['wall_s']:.0f}", str(s["exit"]), ", ".join(s["results"]) or "-",
             s["log"]] for s in sorted(summary["scripts"], key=lambda s: order[s["name"]])]  # fmt: skip
    print_table(["script", "wall s", "exit", "results", "log"], rows)
    failed = [s["name"] for s in summary["scripts"] if s["exit"] != 0]
    print(
        f"wrote {summary_path(args.quick)}" + (f"; FAILED: {', '.join(failed)}" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
