"""The memory of a command's whole process tree, sampled while it runs (Linux ``/proc``).

Shared by the benchmarks that run a command (a build step, the test suite) and report its peak:
a command that starts workers is only as small as all of them together.
"""

from __future__ import annotations

import os
import resource
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    return children


def tree_processes(root: int) -> dict[int, tuple[int, int, str]]:
    """Per process of ``root``'s tree: (PSS, anonymous RSS) in bytes and its command line.

    Not VmRSS: the render's workers map the same cell-cache file, and VmRSS counts its pages
    once per process (a 1,000-sample run summed to 16 GiB on a 24 GiB machine). PSS splits
    shared pages between the processes that map them; anonymous RSS is the private memory
    that cannot be dropped like page cache.
    """
    children = _children()
    found = {}
    stack = [root]
    while stack:
        pid = stack.pop()
        stack.extend(children.get(pid, []))
        try:
            lines = Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()
            command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        pss = anon = 0
        for line in lines:
            key, _, value = line.partition(":")
            if key in ("Pss", "Anonymous"):
                kib = int(value.split()[0]) * 1024
                pss, anon = (pss + kib, anon) if key == "Pss" else (pss, anon + kib)
        found[pid] = (pss, anon, command.strip())
    return found


def tree_memory(root: int) -> tuple[int, int]:
    """(PSS, anonymous RSS) in bytes summed over ``root`` and its descendants."""
    found = tree_processes(root).values()
    return sum(p[0] for p in found), sum(p[1] for p in found)


@dataclass(frozen=True)
class Measured:
    returncode: int
    wall_s: float
    cpu_s: float  # user + system of the whole tree (the children this process waited for)
    peak_tree_pss_mib: float
    peak_tree_anon_mib: float
    stdout: str
    stderr: str
    at_peak: list[tuple[float, str]]  # (PSS MiB, command) of each process at the PSS peak


def run_measured(command: list[str], env: dict[str, str] | None = None,
                 cwd: str | Path | None = None, every_s: float = 0.2) -> Measured:  # fmt: skip
    """Run ``command`` to the end; its wall and CPU time and its tree's peak memory."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, cwd=cwd, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    peak = [0, 0]
    at_peak: list[tuple[float, str]] = []
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            found = tree_processes(process.pid)
            pss, anon = sum(p[0] for p in found.values()), sum(p[1] for p in found.values())
            if pss > peak[0]:
                at_peak[:] = sorted(((p[0] / 2**20, p[2][:160]) for p in found.values()),
                                    reverse=True)  # fmt: skip
            peak[0], peak[1] = max(peak[0], pss), max(peak[1], anon)
            done.wait(every_s)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = process.communicate()
    wall = time.perf_counter() - start
    done.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Measured(process.returncode, wall, cpu, peak[0] / 2**20, peak[1] / 2**20, out, err,
                    at_peak)  # fmt: skip
