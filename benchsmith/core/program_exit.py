"""Ending the ``benchsmith`` program without the interpreter's teardown.

Why: after a command has returned, CPython still tears down every module it imported (numpy,
pyarrow, Pillow, the render's own), about 50 ms for a render, and whoever waits on the command
(``dvc repro``, ``subprocess.run``, a shell) waits for that too. By then everything the command
wrote is complete (outputs are written atomically and closed before it returns), so the
program does what the interpreter's exit does first, in its order: it waits for the threads
that are not daemons, runs every exit handler (pools joined, the fork server ended, Ray shut
down, logging flushed, and whatever a tracer or coverage registered before the program began),
flushes the standard streams, then ends the process with ``os._exit``. Only the teardown of
modules is skipped.

Only the program's entry point calls :func:`exit_without_teardown` (a command that raised keeps
the interpreter's usual exit), and on a Python without the two hooks it uses (CPython's
``threading._shutdown`` and ``atexit._run_exitfuncs``) it exits as usual.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import sys
import threading
from typing import NoReturn


def exit_without_teardown(code: int) -> NoReturn:
    """Exit with ``code`` after the threads and the exit handlers, without the teardown."""
    wait_for_threads = getattr(threading, "_shutdown", None)
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if wait_for_threads is None or run_exit_handlers is None:
        sys.exit(code)
    wait_for_threads()
    run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # a closed pipe: nothing more to deliver
            stream.flush()
    os._exit(int(code))
