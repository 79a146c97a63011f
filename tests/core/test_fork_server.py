"""The fork server's life: started early and at once, ended at exit without its interpreter's
tear-down (what a caller reading the command's output would wait for)."""

from __future__ import annotations

import os
import subprocess
import sys
import time


def run_script(tmp_path, program: str, modules: dict[str, str]) -> tuple[list[str], float]:
    """``program`` run in a new interpreter (no fork server yet) with ``modules`` importable;
    its printed lines, and the seconds until its output pipes closed (as ``dvc repro`` and
    ``subprocess.run`` wait: for every process holding them, the fork server included)."""
    for name, source in modules.items():
        (tmp_path / f"{name}.py").write_text(source, encoding="utf-8")
    script = tmp_path / "script.py"
    script.write_text(program, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path),
                                                                     os.environ.get("PYTHONPATH")]))}  # fmt: skip
    started = time.monotonic()
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, check=True, env=env)  # fmt: skip
    return done.stdout.splitlines(), time.monotonic() - started


def test_a_command_that_used_a_pool_ends_without_waiting_for_its_fork_server(tmp_path):
    """The server preloads a module whose interpreter tear-down takes 20 s (as numba's and
    LLVM's take 0.3 s): left to end on its own, it would hold the command's output pipes open
    that long after the command returned. It is ended with SIGTERM, so the tear-down never
    runs, and the server is gone when the command is."""
    lines, seconds = run_script(
        tmp_path,
        "from benchsmith.core.executor import LocalExecutor\n"
        "import multiprocessing.forkserver as fs\n"
        "if __name__ == '__main__':\n"
        "    with LocalExecutor(2, ['slow_to_end']) as pool:\n"
        "        print(sum(pool.map(abs, [-1, -2, -3])))\n"
        "    print(fs._forkserver._forkserver_pid)\n",
        {"slow_to_end": "import atexit, time\natexit.register(time.sleep, 20)\n"},
    )
    assert lines[0] == "6"
    assert seconds < 15  # 20 s or more if the server were left to end by itself
    try:
        os.kill(int(lines[1]), 0)
    except ProcessLookupError:
        pass
    else:
        raise AssertionError(f"fork server {lines[1]} outlived its command")


def test_the_server_starts_at_once_and_loads_its_preload_while_the_caller_works(tmp_path):
    """``start_fork_server`` returns before the server has imported what it preloads (here a
    module that takes 1.5 s to import); the first pool then finds it running, with it loaded."""
    lines, _ = run_script(
        tmp_path,
        "import sys, time\n"
        "from benchsmith.core.executor import LocalExecutor\n"
        "from benchsmith.core.fork_server import start_fork_server\n"
        "def loaded(name):\n"
        "    return name in sys.modules\n"
        "if __name__ == '__main__':\n"
        "    started = time.monotonic()\n"
        "    start_fork_server(['slow_to_import'])\n"
        "    print(time.monotonic() - started)\n"
        "    with LocalExecutor(2) as pool:\n"
        "        print(pool.call(loaded, 'slow_to_import'))\n",
        {"slow_to_import": "import time\ntime.sleep(1.5)\n"},
    )
    assert float(lines[0]) < 1.0
    assert lines[1] == "True"
