"""Old flag names, kept for one release after the vocabulary was made one.

"Behave like the original" was ``--strict`` (MMNeedle), ``--legacy`` (MMIU, MULTI) and
``--legacy-normalisation`` (VL-ICL); it is ``--legacy`` for every family now, each family's
scorer documenting what it reproduces. MMIU's judge cache was ``--judge-cache`` where every other
command says ``--llm-cache``. An old name still works: the command line is rewritten to the new
one before parsing, with a warning naming both, so a script written for 0.1 keeps running and its
user learns the new name. Remove an entry one release after it was added (0.3).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

# verb -> old flag -> new flag (added in 0.2)
DEPRECATED_FLAGS: dict[str, dict[str, str]] = {
    "score": {
        "--strict": "--legacy",
        "--legacy-normalisation": "--legacy",
        "--judge-cache": "--llm-cache",
    },
}


def renamed(argv: Sequence[str]) -> list[str]:
    """``argv`` with the verb's deprecated flags (``--old`` or ``--old=VALUE``) under their new
    names; one warning per old name on stderr. Values are never rewritten (after ``--``
    nothing is)."""
    words = list(argv)
    verb = next((w for w in words if not w.startswith("-")), None)
    table = DEPRECATED_FLAGS.get(verb or "", {})
    out, warned, rest = [], set(), False
    for word in words:
        name, sep, value = word.partition("=")
        if not rest and name in table:
            if name not in warned:
                warned.add(name)
                print(f"benchsmith: warning: {name} is deprecated; use {table[name]} "
                      "(the old name goes in 0.3)", file=sys.stderr)  # fmt: skip
            word = table[name] + (sep + value if sep else "")
        rest = rest or word == "--"
        out.append(word)
    return out
