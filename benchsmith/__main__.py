"""``python -m benchsmith`` and the ``benchsmith`` program (its console script)."""

import os

from benchsmith.core.math_threads import one_math_thread_environment
from benchsmith.core.program_exit import exit_without_teardown


def run() -> None:
    """Run the command line, then exit without the interpreter's teardown.

    The command runs one BLAS/OpenMP thread in this process and in every process it starts,
    unless the user set a count (:mod:`benchsmith.core.math_threads`): its parallelism is
    worker processes, its own matrices are small, and each idle OpenBLAS thread would spin for
    0.1 s after numpy's import, while the command's workers start on the same cores."""
    os.environ.update(one_math_thread_environment())  # before anything imports numpy
    from benchsmith.cli import main

    exit_without_teardown(main())


if __name__ == "__main__":
    run()
