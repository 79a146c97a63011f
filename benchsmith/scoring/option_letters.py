"""Option letters in a model's reply: the extraction every multiple-choice scorer shares.

In order, each step only when the previous found nothing:

1. **exact letter**: the reply, stripped of spaces and of ``. , ( ) :`` around it, is one
   letter of the item's options (either case);
2. **answer patterns**: a leading ``(B)``, ``B.``, ``B:``, ``B)`` or ``B `` followed by text;
   ``answer is B``, ``answer: B``, ``option B``, ``choice B`` (the first such phrase wins);
3. **option text**: exactly one option's text (normalised: case, spaces) appears in the reply,
   or the reply is an option's text;
4. otherwise nothing: the caller may ask an LLM judge, or count the reply as unparsed.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

_STRIP = " \t\r\n.,():"
_LEADING = re.compile(r"^\(?([A-Za-z])\)?(?:[.:)]|\s)\s*\S")
_PHRASES = re.compile(
    r"(?:answer\s*(?:is|:)|option|choice)\s*[:\-]?\s*\(?([A-Za-z])\)?(?![A-Za-z])",
    re.IGNORECASE,
)


def letters_for(options: Sequence[str]) -> str:
    return "".join(chr(ord("A") + k) for k in range(len(options)))


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def extract_letter(response: str | None, options: Sequence[str]) -> tuple[str | None, str]:
    """(letter or None, the step that found it: exact | pattern | option_text | none)."""
    if not response:
        return None, "none"
    valid = letters_for(options)
    text = str(response).replace("\u00a0", " ").strip()
    bare = text.strip(_STRIP)
    if len(bare) == 1 and bare.upper() in valid:
        return bare.upper(), "exact"
    leading = _LEADING.match(text)
    if leading and leading.group(1).isupper() and leading.group(1) in valid:
        return leading.group(1), "pattern"
    for match in _PHRASES.finditer(text):
        letter = match.group(1).upper()
        if letter in valid:
            return letter, "pattern"
    said = _norm(text)
    found = [k for k, option in enumerate(options) if _norm(option) and _norm(option) in said]
    if len(found) == 1:
        return valid[found[0]], "option_text"
    return None, "none"
