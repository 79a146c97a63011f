"""The program exits without the interpreter's teardown, after every exit handler, with its
output delivered; imported as a library, nothing changes."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

PROGRAM = """
import atexit, sys, threading, time
atexit.register(lambda: print("early handler ran", flush=True))  # as a tracer or coverage would
from benchsmith.core.program_exit import exit_without_teardown


class TornDown:
    def __del__(self):
        print("torn down", flush=True)


kept = TornDown()
atexit.register(lambda: print("late handler ran", flush=True))
worker = threading.Thread(target=lambda: (time.sleep(0.3), print("thread done", flush=True)))
worker.start()  # not a daemon: the exit waits for it, as the interpreter's would
print("x" * 200_000)  # more than a pipe holds: delivered in full
sys.stderr.write("on stderr")
if sys.argv[1] == "arm":
    exit_without_teardown(3)
"""


def run(mode: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PROGRAM, mode], capture_output=True, text=True,
                          timeout=60)  # fmt: skip


def test_an_armed_exit_runs_the_handlers_delivers_the_output_and_skips_the_teardown():
    done = run("arm")
    assert done.returncode == 3
    lines = done.stdout.splitlines()
    assert lines[0] == "x" * 200_000
    assert lines[1:] == ["thread done", "late handler ran", "early handler ran"]
    assert "torn down" not in lines  # the module teardown was skipped
    assert done.stderr == "on stderr"


def test_imported_but_not_armed_the_interpreter_exits_as_usual():
    done = run("library")
    assert done.returncode == 0
    assert done.stdout.splitlines()[1:] == [
        "thread done",
        "late handler ran",
        "early handler ran",
        "torn down",
    ]


def test_the_program_still_ends_its_fork_server_first(tmp_path):
    """A pool's fork server is ended by multiprocessing's exit handler before the process
    ends, however late the exit was imported: the server preloads a module whose interpreter
    tear-down takes 20 s, which would hold the output pipes that long if the process ended
    first and left the server to notice the exit by itself."""
    (tmp_path / "slow_to_end.py").write_text(
        "import atexit, time\natexit.register(time.sleep, 20)\n"
    )
    program = (
        "import multiprocessing.forkserver as fs\n"
        "from benchsmith.core.executor import LocalExecutor\n"
        "from benchsmith.core.program_exit import exit_without_teardown\n"
        "if __name__ == '__main__':\n"
        "    with LocalExecutor(2, ['slow_to_end']) as pool:\n"
        "        print(sum(pool.map(abs, [-1, -2, -3])))\n"
        "    print(fs._forkserver._forkserver_pid)\n"
        "    exit_without_teardown(0)\n"
    )
    (tmp_path / "program.py").write_text(program)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path),
                                                                     os.environ.get("PYTHONPATH")]))}  # fmt: skip
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(tmp_path / "program.py")], capture_output=True,
                          text=True, timeout=120, env=env)  # fmt: skip
    seconds = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    total, server = done.stdout.split()
    assert total == "6" and seconds < 15
    with pytest.raises(ProcessLookupError):
        os.kill(int(server), 0)
