"""This process's fork server: what it preloads, where it imports from, when it starts and ends.

Why a module: a process has one fork server, started by its first local pool and serving every
later one (:class:`benchsmith.core.executor.LocalExecutor`). Three things about it cost a
command real time. What it preloads (numba kernels: half a second) is paid once, in the server,
instead of in every worker. A step that knows it will need a pool starts the server first
(:func:`start_fork_server`), so the preload runs while the step reads its inputs, not after.
And at exit the server is ended with ``SIGTERM`` (:func:`start_fork_server` arranges it):
left to notice the exit itself, it tears down its interpreter, numba's and LLVM's state with
it, for about 0.3 s, and whoever reads the command's output (``dvc repro``, ``subprocess.run``)
waits for that, since the server holds the same pipes.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.forkserver
import multiprocessing.util
import os
import signal
from collections.abc import Iterator, Mapping, Sequence

from benchsmith.core.math_threads import one_math_thread_environment

# Modules every fork server this process starts imports (an ordered set): see
# :func:`preload_in_pools`.
_POOL_PRELOAD: dict[str, None] = {}


def preload_in_pools(*modules: str) -> None:
    """Have the fork server import ``modules`` whichever pool starts it. Why: a process has one
    fork server, started by its first pool and serving every later one, so a pool's own
    ``preload`` counts only when that pool comes first (an audit hashes its sources before it
    renders); a module whose pool's workers need heavy imports (numba kernels, scipy) calls
    this when it is imported, and every later pool's workers start with them loaded."""
    _POOL_PRELOAD.update(dict.fromkeys(modules))


@contextlib.contextmanager
def imports_as_here() -> Iterator[None]:
    """While a fork server starts: it imports ``benchsmith`` from where this process did.

    Why: the fork server is ``python -c ...``, and Python puts the working directory first on
    a ``-c`` program's path (3.11 ignores the ``sys_path`` multiprocessing hands it). Run from
    a folder that holds another ``benchsmith/`` (a checkout, a copy of the project), the
    workers ran that copy's code while the parent ran the installed one, and compiled that
    copy's numba kernels afresh in every render (5-7 s, its cache empty). With
    ``PYTHONSAFEPATH`` the working directory is left out, and the folder this process's
    ``benchsmith`` came from goes first on ``PYTHONPATH`` unless it is a site-packages folder
    (an installed package is found there anyway; put first, it would come before the
    standard library)."""
    import site
    import sysconfig

    import benchsmith

    home = os.path.dirname(os.path.dirname(os.path.abspath(benchsmith.__file__)))
    installed = {os.path.abspath(p) for p in (*site.getsitepackages(), site.getusersitepackages(),
                                              *sysconfig.get_paths().values())}  # fmt: skip
    first = [] if home in installed else [home]
    path = os.pathsep.join(filter(None, [*first, os.environ.get("PYTHONPATH")]))
    with _variables({"PYTHONSAFEPATH": "1", "PYTHONPATH": path}):
        yield


def start_fork_server(
    preload: Sequence[str] = (), environment: Mapping[str, str] | None = None
) -> None:
    """Start this process's fork server now, if it is not running, and return at once: it
    imports ``preload`` and the modules named by :func:`preload_in_pools` while the caller goes
    on; the first pool's workers are forked when it is ready. ``environment``: variables the
    server starts with (and its workers inherit), for its preload modules to read: a module
    imported by name takes no arguments. It also starts with one BLAS/OpenMP thread unless the
    user chose a count (:mod:`benchsmith.core.math_threads`). A running server keeps what it
    loaded, and the environment it started with."""
    modules = list(dict.fromkeys([*_POOL_PRELOAD, *preload]))
    if modules:  # read when the server starts
        multiprocessing.get_context("forkserver").set_forkserver_preload(modules)
    variables = {**one_math_thread_environment(), **(environment or {})}
    with imports_as_here(), _variables(variables):
        multiprocessing.forkserver.ensure_running()
    _end_at_exit()


@contextlib.contextmanager
def _variables(environment: Mapping[str, str]) -> Iterator[None]:
    """``environment`` set in this process while the block runs, as it was after."""
    saved = {name: os.environ.get(name) for name in environment}
    os.environ.update(environment)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


_ending_registered = False


def _end_at_exit() -> None:
    """Once per process: end the fork server at exit, after multiprocessing's own clean-up
    (pools terminated and joined: exit priority below theirs)."""
    global _ending_registered
    if not _ending_registered:
        multiprocessing.util.Finalize(None, end_fork_server, exitpriority=-100)
        _ending_registered = True


def end_fork_server() -> None:
    """End this process's fork server, if it runs, with ``SIGTERM``: it dies without tearing
    down its interpreter (it handles no ``SIGTERM``), and the pipes it shares with this process
    close at once. Its workers are this process's pools', closed and joined before."""
    server = multiprocessing.forkserver._forkserver
    pid = getattr(server, "_forkserver_pid", None)
    if pid is None:
        return
    with contextlib.suppress(OSError):  # gone already, or not our child
        os.kill(pid, signal.SIGTERM)
        os.waitpid(pid, 0)
