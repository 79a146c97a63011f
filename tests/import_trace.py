"""Run one ``benchsmith`` command and list the package files it imported (for the DVC deps test).

    python tests/import_trace.py OUT.txt benchsmith ARGS...

Writes the repository-relative path of every ``benchsmith`` module loaded by the end of the
run (worker processes load a subset of the parent's modules, so the parent's list covers them).
"""

from __future__ import annotations

import sys
from pathlib import Path


def loaded_files(root: Path) -> list[str]:
    files = set()
    for name, module in list(sys.modules.items()):
        if name != "benchsmith" and not name.startswith("benchsmith."):
            continue
        file = getattr(module, "__file__", None)
        if file:
            path = Path(file).resolve()
            if root in path.parents:
                files.add(path.relative_to(root).as_posix())
    return sorted(files)


def main() -> int:
    out, argv = Path(sys.argv[1]), sys.argv[3:]  # sys.argv[2] is the "benchsmith" of the cmd
    import benchsmith
    from benchsmith.cli import main as cli_main

    root = Path(benchsmith.__file__).resolve().parents[1]
    try:
        code = cli_main(argv)
    finally:
        out.write_text("\n".join(loaded_files(root)) + "\n", encoding="utf-8")
    return code


if __name__ == "__main__":
    sys.exit(main())
