"""Run one ``benchsmith`` command and list the package files it imported (for the DVC deps test).

    python tests/import_trace.py OUT.txt benchsmith ARGS...

Writes the repository-relative path of every ``benchsmith`` module loaded by the end of the
run (worker processes load a subset of the parent's modules, so the parent's list covers them)
and of every file under ``cards/`` the run opened (the dataset card templates).
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

    root = Path(benchsmith.__file__).resolve().parents[1]
    opened: set[str] = set()

    def watch(event: str, args: tuple) -> None:
        if event == "open" and isinstance(args[0], str | Path):
            path = Path(args[0]).resolve()
            if (root / "cards") in path.parents and path.suffix == ".j2":
                opened.add(path.relative_to(root).as_posix())

    sys.addaudithook(watch)
    from benchsmith.cli import main as cli_main

    try:
        code = cli_main(argv)
    finally:
        files = sorted({*loaded_files(root), *opened})
        out.write_text("\n".join(files) + "\n", encoding="utf-8")
    return code


if __name__ == "__main__":
    sys.exit(main())
