"""CLI start-up: how long ``--help`` of the heavy steps takes, against a bare interpreter.

Why: ``dvc repro`` and users run a fresh ``benchsmith`` process per step, and a step's help
is the first thing a new user runs. The commands import their heavy libraries (polars,
pyarrow, pycocotools, numba, datasets) only when a step runs, so ``--help`` should cost little
more than starting Python. This script measures it:

* **ours**: ``python -m benchsmith <step> --help`` for each command of ``--commands`` (default
  ``build mmneedle render``, ``build mmneedle plan``, ``publish mmneedle``, ``audit``), each a
  fresh process, ``--rounds`` (default 15) times after 2 untimed warm-ups (so the files are in
  the page cache): median and spread of the wall time, and the heavy modules the process
  loaded (``-X importtime`` is not used: it slows imports down).
* **baseline**: ``python -c pass`` (the interpreter alone) and ``python -c "import numpy"``,
  timed the same way in the same run.

Target: ``build mmneedle render --help`` under 0.3 s. Run ``python bench/cli_startup.py``
(~30 s). Results go to ``bench/results/cli_startup.json``.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time

from synthetic_coco import machine_info, mark, print_table, write_result

NAME = "cli_startup"
TARGET_S = 0.3
HEAVY = ("polars", "pyarrow", "pycocotools", "numba", "datasets", "pandas", "PIL", "tqdm")
DEFAULT_COMMANDS = (
    "build mmneedle render",
    "build mmneedle plan",
    "publish mmneedle",
    "audit",
)
PROBE = (
    "import runpy, sys\n"
    "sys.argv = ['benchsmith', *sys.argv[1:]]\n"
    "try:\n"
    "    runpy.run_module('benchsmith', run_name='__main__')\n"
    "except SystemExit:\n"
    "    pass\n"
    "heavy = sorted({m.split('.')[0] for m in sys.modules} & set(%r))\n"
    "print('HEAVY', ','.join(heavy), file=sys.stderr)\n"
)


def timed(command: list[str], rounds: int) -> list[float]:
    for _ in range(2):  # warm the page cache
        subprocess.run(command, capture_output=True, check=True)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return times


def heavy_modules(args: list[str]) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (HEAVY,), *args, "--help"], capture_output=True, text=True
    )
    line = [x for x in done.stderr.splitlines() if x.startswith("HEAVY")][-1]
    return [m for m in line.split(" ", 1)[1].split(",") if m]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="timed runs per command")
    parser.add_argument(
        "--commands", nargs="+", default=list(DEFAULT_COMMANDS), help="quoted subcommands"
    )
    args = parser.parse_args(argv)
    rows, results = [], {}
    cases = [("python -c pass", [sys.executable, "-c", "pass"], None)]
    cases.append(("python -c 'import numpy'", [sys.executable, "-c", "import numpy"], None))
    for command in args.commands:
        words = command.split()
        cases.append(
            (f"{command} --help", [sys.executable, "-m", "benchsmith", *words, "--help"], words)
        )
    for label, command, words in cases:
        times = timed(command, args.rounds)
        median = statistics.median(times)
        heavy = heavy_modules(words) if words else []
        results[label] = {
            "rounds_s": times,
            "median_s": median,
            "spread_s": [min(times), max(times)],
            "heavy_modules": heavy,
        }
        rows.append(
            [label, f"{median:.3f}", f"{min(times):.3f}-{max(times):.3f}", ",".join(heavy) or "-"]
        )
    print_table(["command", "median s", "spread s", "heavy modules loaded"], rows)
    if "build mmneedle render --help" in results:
        render = results["build mmneedle render --help"]["median_s"]
        bare = results["python -c pass"]["median_s"]
        print(
            f"render --help {render:.3f} s = bare interpreter + {render - bare:.3f} s; "
            f"under {TARGET_S} s: {mark(render < TARGET_S)}"
        )
    result = {"commands": results, "target_s": TARGET_S, "machine": machine_info()}
    print(f"wrote {write_result(NAME, result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
