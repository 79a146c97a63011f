"""Write the code ``deps`` of every ``dvc.yaml`` stage from what the stage really imports.

Nobody adds a stage's code dependencies by hand: the sample pipeline is built once with an
import tracer in every ``benchsmith`` process (``tests/stage_tracer/``, the same traced build
``tests/test_dvc_deps.py`` reads), and each file a stage loaded becomes a dep, folded by one
rule:

- ``benchsmith/core/...``: the folder ``benchsmith/core`` (the ground floor every stage stands on);
- ``benchsmith/builders/<family>/...`` and ``benchsmith/sources/<source>/...``: that folder (a
  family's or a source's own code: an edit anywhere in it may change what it builds);
- anything else (``cli.py``, a command, a contract or HF module, a card template): the file.

What the stage already lists stays (a trace sees the sample profile's code paths only: the
``full`` profile's download code, ``sources/fetching``, is listed by hand), an entry another one
covers is dropped, and the code deps are written sorted. A stage that depends on the whole
package on purpose (a publish stage: each row records a digest of all of ``benchsmith``) keeps
its ``deps``. Data ``deps`` and comments stay where they are. ``tests/test_dvc_deps.py`` fails
when ``dvc.yaml`` differs from what this writes.

Usage: ``python scripts/make_dvc_deps.py`` (builds the traced pipeline in a temporary copy,
about 2 minutes), or ``--imports FILE`` with a traced build's record (``fresh_checkout.json``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DVC_YAML = ROOT / "dvc.yaml"
WHOLE = ("benchsmith", "cards")  # deps that name the whole package: left as written
FOLDED = (
    re.compile(r"^(benchsmith/core)/"),
    re.compile(r"^(benchsmith/builders/[^/]+)/"),
    re.compile(r"^(benchsmith/sources/[^/]+)/"),
)


def is_code(path: str) -> bool:
    return path.startswith(("benchsmith/", "cards/")) or path in WHOLE


def fold(path: str) -> str:
    return next((m.group(1) for rule in FOLDED if (m := rule.match(path))), path)


def covers(dep: str, path: str) -> bool:
    return path == dep or path.startswith(dep.rstrip("/") + "/")


def code_deps(listed: list[str], used: list[str]) -> list[str]:
    """The stage's code deps: what it lists and what it loaded (folded), none covered by
    another, sorted."""
    deps = set(listed) | {fold(p) for p in used if is_code(p)}
    return sorted(d for d in deps if not any(o != d and covers(o, d) for o in deps))


def rendered(text: str, imports: dict[str, list[str]]) -> str:
    """``dvc.yaml``'s text with each stage's code deps written from ``imports``."""
    out: list[str] = []
    stage, in_deps, pending = None, False, []

    def flush() -> None:
        nonlocal pending
        if pending and stage in imports:
            listed = [line.split("- ", 1)[1].split("#")[0].strip() for line in pending]
            out.extend(f"      - {dep}" for dep in code_deps(listed, imports[stage]))
        elif pending:
            out.extend(pending)
        pending = []

    for line in text.split("\n"):
        header = re.match(r"^  ([\w-]+):\s*$", line)
        if header:
            flush()
            stage, in_deps = header.group(1), False
        item = re.match(r"^      - ([^\s#]+)\s*(#.*)?$", line)
        if in_deps and item and is_code(item.group(1)):
            if item.group(1) in WHOLE:  # the whole package: this stage keeps what it says
                out.extend(pending)
                pending = []
                out.append(line)
                continue
            pending.append(line)
            continue
        if in_deps and not item and not line.strip().startswith("#"):
            flush()
            in_deps = False
        if line.strip() == "deps:" and line.startswith("    ") and not line.startswith("     "):
            in_deps = True
        out.append(line)
    flush()
    return "\n".join(out)


def traced_imports() -> dict[str, list[str]]:
    """Build the pipeline in a temporary copy with the import tracer (as the tests do)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fresh_checkout import build_fresh_checkout, load_fresh_checkout

    with tempfile.TemporaryDirectory(prefix="benchsmith-deps-") as work:
        build_fresh_checkout(Path(work))
        return load_fresh_checkout(Path(work)).imports


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--imports", type=Path, metavar="FILE",
                        help="a traced build's record (its 'imports': stage -> files loaded)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.imports:
        try:
            imports = json.loads(args.imports.read_text(encoding="utf-8"))["imports"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            parser.error(f"{args.imports}: not a traced build's record ({exc!r}); pass the "
                         "fresh_checkout.json a traced build wrote, or no --imports to build one")  # fmt: skip
    else:
        imports = traced_imports()
    text = DVC_YAML.read_text(encoding="utf-8")
    new = rendered(text, imports)
    DVC_YAML.write_text(new, encoding="utf-8")
    changed = sum(a != b for a, b in zip(text.split("\n"), new.split("\n"), strict=False))
    print(f"wrote {DVC_YAML} ({changed} lines changed; run `dvc repro` next)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
