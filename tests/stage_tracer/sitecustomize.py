"""Lists what each ``benchsmith`` command of a ``dvc repro`` imported (for the DVC deps tests).

Put this folder on ``PYTHONPATH`` and name a folder in ``BENCHSMITH_IMPORT_TRACE``: every Python
process then loads this file at start-up, and one whose program is ``benchsmith`` (a pipeline
stage's command, or a worker it spawned, which carries the same arguments) writes, when it
exits, ``<pid>.json`` there: its arguments, the repository-relative path of every ``benchsmith``
module it had loaded, and every card template (``cards/*.j2``) it opened. Any other process (DVC
itself, git) writes nothing.
"""

from __future__ import annotations

import atexit
import json
import os
import sys
from pathlib import Path

_OUT = os.environ.get("BENCHSMITH_IMPORT_TRACE")
_OPENED: set[str] = set()


def _is_benchsmith() -> bool:
    return bool(sys.argv) and Path(sys.argv[0]).name == "benchsmith"


def _watch(event: str, args: tuple) -> None:
    if event == "open" and isinstance(args[0], str) and args[0].endswith(".j2"):
        _OPENED.add(os.path.realpath(args[0]))


def _write() -> None:
    package = sys.modules.get("benchsmith")
    if package is None or not _is_benchsmith():
        return
    root = Path(package.__file__).resolve().parents[1]
    files = set()
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if (name == "benchsmith" or name.startswith("benchsmith.")) and file:
            path = Path(file).resolve()
            if root in path.parents:
                files.add(path.relative_to(root).as_posix())
    for opened in _OPENED:
        path = Path(opened)
        if (root / "cards") in path.parents:
            files.add(path.relative_to(root).as_posix())
    record = {"argv": sys.argv[1:], "files": sorted(files)}
    Path(_OUT, f"{os.getpid()}.json").write_text(json.dumps(record), encoding="utf-8")


if _OUT and _is_benchsmith():
    sys.addaudithook(_watch)
    atexit.register(_write)
