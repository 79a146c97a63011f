"""Both executors: results in task order, task errors as themselves, bounded and retried."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from benchsmith.core.errors import BenchsmithError, SourceError
from benchsmith.core.executor import (
    MATH_THREAD_VARIABLES,
    ExecutorConfig,
    LocalExecutor,
    RayExecutor,
    open_executor,
)


def square(x: int) -> int:
    return x * x


def fail_on_seven(x: int) -> int:
    if x == 7:
        raise SourceError("corrupt JPEG data (premature end)", path=f"val2014/{x}.jpg", fix="fetch")
    return x


def die_once(marker: str) -> int:
    """Kills its worker process the first time (as a node lost mid-task would)."""
    path = Path(marker)
    if not path.exists():
        path.write_text("died", encoding="utf-8")
        os._exit(1)
    return os.getpid()


@pytest.mark.parametrize("workers", [1, 2])
def test_local_map_keeps_task_order(workers):
    with LocalExecutor(workers) as executor:
        assert list(executor.map(square, range(50), chunksize=3)) == [x * x for x in range(50)]
        assert executor.call(square, 9) == 81


def test_ray_map_keeps_task_order_with_a_small_window(ray_cluster):
    with RayExecutor(2, window=2) as executor:
        assert executor.workers == 2
        assert list(executor.map(square, range(50), chunksize=3)) == [x * x for x in range(50)]
        assert executor.call(square, 9) == 81
    assert ray_cluster.is_initialized()  # a Ray it did not start is left running


@pytest.mark.parametrize("kind", ["local", "ray"])
def test_a_task_error_is_raised_as_itself(kind, request):
    if kind == "ray":
        request.getfixturevalue("ray_cluster")
    executor = open_executor(ExecutorConfig(kind, 2))
    with executor, pytest.raises(SourceError, match="premature end") as err:
        list(executor.map(fail_on_seven, range(20), chunksize=2))
    assert "val2014/7.jpg" in str(err.value)


def test_a_ray_task_whose_worker_dies_is_retried(ray_cluster, tmp_path):
    marker = tmp_path / "died-once"
    with RayExecutor(2, max_retries=2) as executor:
        assert isinstance(executor.call(die_once, str(marker)), int)
    assert marker.read_text(encoding="utf-8") == "died"


def test_without_retries_a_dead_worker_is_an_error(ray_cluster, tmp_path):
    with RayExecutor(2, max_retries=0) as executor, pytest.raises(Exception) as err:
        executor.call(die_once, str(tmp_path / "marker"))
    assert not isinstance(err.value, SourceError)


def test_bad_settings_are_clear_errors(monkeypatch):
    with pytest.raises(BenchsmithError, match="(?s)unknown executor 'rey'.*local, ray"):
        ExecutorConfig("rey")
    with pytest.raises(BenchsmithError, match="whole number"):
        ExecutorConfig("local", -1)
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the extra were not installed
    with pytest.raises(BenchsmithError, match=r"pip install 'benchsmith\[ray\]'"), RayExecutor(1):
        pass


MATH_THREADS_PROGRAM = """\
import multiprocessing.forkserver
import os
from benchsmith.core.executor import LocalExecutor, MATH_THREAD_VARIABLES

def threads(pid="self"):  # OpenBLAS's own threads are threads too
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("Threads:"))

def blas_threads(_):
    from threadpoolctl import threadpool_info

    blas = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    return [threads(), *blas]

if __name__ == "__main__":
    with LocalExecutor(2, ["numpy"]) as executor:  # the fork server loads OpenBLAS
        print(list(executor.map(os.getenv, MATH_THREAD_VARIABLES)))
        print(executor.call(blas_threads, None))
        print(threads(multiprocessing.forkserver._forkserver._forkserver_pid))
    print([os.environ.get(name) for name in MATH_THREAD_VARIABLES])
"""


def test_local_workers_run_one_math_thread_unless_the_user_chose(tmp_path, monkeypatch):
    """The fork server starts with one BLAS thread, so a worker has no thread but its own
    (an idle OpenBLAS thread spins 0.1 s); a user's count wins. Each case in a fresh process:
    a process has one fork server, and it keeps the environment it started with."""
    for name in MATH_THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    seen, threads, server_threads, parent = run_in_a_fresh_process(tmp_path, MATH_THREADS_PROGRAM)
    assert seen == "['1', '1', '1']"
    assert threads == "[1, 1]"  # one thread in the worker; numpy's OpenBLAS runs one
    assert server_threads == "1"  # and none in the fork server, which loaded it
    assert parent == "[None, None, None]"  # the calling process is left as it was

    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # the user's choice wins: no limit is imposed
    seen, _, _, parent = run_in_a_fresh_process(tmp_path, MATH_THREADS_PROGRAM)
    assert seen == "['2', None, None]"
    assert parent == "['2', None, None]"


def test_the_command_line_runs_one_math_thread_unless_the_user_chose(tmp_path, monkeypatch):
    """``benchsmith`` sets the limit before anything imports numpy, for itself and every
    process it starts; a user's count is left alone."""
    program = (
        "import os, sys\n"
        "import benchsmith.cli\n"
        "names = ('OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'MKL_NUM_THREADS')\n"
        "benchsmith.cli.main = lambda: print([os.environ.get(n) for n in names]) or 0\n"
        "print('numpy' in sys.modules)\n"
        "from benchsmith.__main__ import run\n"
        "run()\n"
    )
    for name in MATH_THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert run_in_a_fresh_process(tmp_path, program) == ["False", "['1', '1', '1']"]
    monkeypatch.setenv("MKL_NUM_THREADS", "4")
    assert run_in_a_fresh_process(tmp_path, program) == ["False", "[None, None, '4']"]


def test_a_module_asked_for_by_any_pool_is_loaded_in_the_workers_of_the_first(tmp_path):
    """A process has one fork server, started by its first pool: modules a module asked for
    with ``preload_in_pools`` are loaded there even when another pool starts it, and its own
    ``preload`` too; a module nobody asked for is not (a fresh process, so no server runs)."""
    first, second = run_in_a_fresh_process(
        tmp_path,
        "import sys\n"
        "from benchsmith.core.executor import LocalExecutor, preload_in_pools\n"
        "def loaded(name):\n"
        "    return name in sys.modules\n"
        "if __name__ == '__main__':\n"
        "    preload_in_pools('colorsys')\n"
        "    with LocalExecutor(2, ['wave']) as first:\n"
        "        print(list(first.map(loaded, ['colorsys', 'wave', 'sndhdr'])))\n"
        "    preload_in_pools('fractions')\n"
        "    with LocalExecutor(2, ['tabnanny']) as second:  # the server already runs\n"
        "        print(list(second.map(loaded, ['colorsys', 'fractions', 'tabnanny'])))\n",
    )[:2]
    assert first == "[True, True, False]"
    # the running server keeps what it loaded; a later request cannot add to it
    assert second == "[True, False, False]"


def test_workers_import_the_benchsmith_their_parent_imported_whatever_the_folder(tmp_path):
    """Run from a folder that holds another ``benchsmith/`` (a checkout, a copy of the
    project), the fork server (``python -c``, the working directory first on its path) once
    imported that copy: workers ran other code than their parent, and compiled its kernels
    afresh. They load the parent's (a fresh process, so no fork server runs yet)."""
    import benchsmith

    elsewhere = tmp_path / "a_checkout"
    (elsewhere / "benchsmith").mkdir(parents=True)
    (elsewhere / "benchsmith" / "__init__.py").write_text("", encoding="utf-8")
    lines = run_in_a_fresh_process(
        tmp_path,
        "import os, sys\n"
        "import benchsmith\n"
        "from benchsmith.core.executor import LocalExecutor\n"
        "def where(_):\n"
        "    return sys.modules['benchsmith'].__file__\n"
        "if __name__ == '__main__':\n"
        "    with LocalExecutor(2, ['benchsmith']) as pool:  # the server imports it\n"
        "        print(benchsmith.__file__, *set(pool.map(where, range(4))))\n"
        "    print(os.environ.get('PYTHONSAFEPATH'))\n",
        cwd=elsewhere,
    )
    parent, *workers = lines[0].split(" ", 1)
    assert parent == benchsmith.__file__
    assert workers == [benchsmith.__file__]
    assert lines[1] == "None"  # the parent's environment is as it was


def run_in_a_fresh_process(tmp_path, program: str, cwd=None) -> list[str]:
    """The lines ``program`` prints, run as a script in a new interpreter: no fork server runs
    there yet, so what its first pool starts is what the test sees."""
    import subprocess

    script = tmp_path / "pools.py"
    script.write_text(program, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120, check=True, cwd=cwd)  # fmt: skip
    return done.stdout.splitlines()
