"""numba's CPU target readied for benchsmith's kernels without its BLAS check.

Why: the first time a process compiles or loads a numba kernel, numba readies its CPU target
and, to learn whether ``np.dot`` and its kin can be compiled, imports
``scipy.linalg.cython_blas``. With scipy installed (imagehash needs it) that pulls in
``scipy.linalg`` and ``numpy.f2py``: 0.19 s of the 0.55 s a process spent before its first
kernel ran, paid by every render's fork server, plan, and hash search. No kernel here calls a
BLAS routine, so each kernel module calls :func:`ready_numba` after its imports: the import
fails for that moment only (numba then records "no BLAS" in this process) and is importable
again right after. A process that had already imported it keeps it; nothing is blocked then.
"""

from __future__ import annotations

import sys

_BLAS = "scipy.linalg.cython_blas"


def ready_numba() -> None:
    """Ready numba's CPU target (once per process; later calls cost nothing)."""
    from numba.core.registry import cpu_target

    block = _BLAS not in sys.modules
    if block:
        sys.modules[_BLAS] = None  # type: ignore[assignment]  # `import` of it raises ImportError
    try:
        cpu_target.target_context.refresh()
    finally:
        if block and _BLAS in sys.modules and sys.modules[_BLAS] is None:
            del sys.modules[_BLAS]
