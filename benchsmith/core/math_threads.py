"""One BLAS/OpenMP thread in every worker process, unless the user chose a count.

Why: the worker processes are the parallelism. numpy's OpenBLAS otherwise starts a thread per
core in every process that imports numpy, and those threads cost twice:

* on 2 cores two workers' matrix products fight over them: the ScanNet frame extraction ran
  1.6x *slower* on 2 workers than on 1 (``bench/ray_executor.py``);
* each new thread spins for about 0.1 s before it sleeps (OpenBLAS waits 2^28 cycles for work),
  even when no matrix product ever comes: in a CLI render that was 0.2 s of CPU in the fork
  server and its workers, at start-up, when every core is busy importing.

So a fork server starts with :func:`one_math_thread_environment` (its numpy loads OpenBLAS with
one thread, and every worker forked from it inherits that); a worker of a fork server started
otherwise limits itself with threadpoolctl (:func:`one_math_thread`, a pool initializer). Ray
does the same for its tasks. A user who sets any of :data:`MATH_THREAD_VARIABLES` decides.
"""

from __future__ import annotations

import os

MATH_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def user_chose_math_threads() -> bool:
    """Whether any of :data:`MATH_THREAD_VARIABLES` is set (then no limit is imposed)."""
    return any(os.environ.get(name) for name in MATH_THREAD_VARIABLES)


def one_math_thread_environment() -> dict[str, str]:
    """The variables a worker process starts with: one thread each, or none when the user chose."""
    if user_chose_math_threads():
        return {}
    return dict.fromkeys(MATH_THREAD_VARIABLES, "1")


def one_math_thread() -> None:
    """Pool initializer: this worker runs one BLAS/OpenMP thread. Free when the fork server
    started with :func:`one_math_thread_environment` (the variables are inherited, and its numpy
    loaded OpenBLAS with them); otherwise threadpoolctl limits the libraries loaded already, and
    the variables, set here, the ones a task imports later."""
    if all(os.environ.get(name) == "1" for name in MATH_THREAD_VARIABLES):
        return
    from threadpoolctl import threadpool_limits

    for name in MATH_THREAD_VARIABLES:
        os.environ[name] = "1"
    threadpool_limits(limits=1)
