"""numba readied without its BLAS check: no kernel process imports scipy.linalg for it, and
the check's module stays importable for anyone who needs it."""

from __future__ import annotations

import subprocess
import sys

KERNELS = (
    "benchsmith.builders.mmneedle.jpeg_mosaic_kernel",
    "benchsmith.builders.mmneedle.resample_kernel",
    "benchsmith.builders.mmneedle.rng_kernel",
    "benchsmith.builders.mmneedle.canonical_kernel",
    "benchsmith.images.near_duplicate_kernel",
)


def run(program: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=300, check=True)  # fmt: skip
    return done.stdout.split()


def test_the_kernels_load_without_scipy_linalg_and_leave_it_importable():
    """Every kernel module loads (its eager signatures compiled or read from the cache, so a
    kernel that needed BLAS would fail here) without scipy.linalg (0.19 s with numpy.f2py),
    and scipy.linalg.cython_blas imports normally afterwards."""
    loaded, after, f2py, importable = run(
        "import importlib, sys\n"
        f"for name in {KERNELS!r}:\n"
        "    importlib.import_module(name)\n"
        "print('scipy.linalg' in sys.modules, 'scipy.linalg.cython_blas' in sys.modules,\n"
        "      'numpy.f2py' in sys.modules)\n"
        "import scipy.linalg.cython_blas\n"
        "print(sys.modules['scipy.linalg.cython_blas'] is not None)\n"
    )
    assert (loaded, after, f2py) == ("False", "False", "False")
    assert importable == "True"


def test_a_process_that_imported_scipy_linalg_keeps_it():
    [kept] = run(
        "import sys, scipy.linalg.cython_blas\n"
        "from benchsmith.core.jit import ready_numba\n"
        "ready_numba()\n"
        "print(sys.modules['scipy.linalg.cython_blas'] is not None)\n"
    )
    assert kept == "True"
