"""Edit distance between two strings: what ANLS, the LIME helpers and the OCR error rate share.

It lives on the ground floor because the OCR engines (images/) and the scorers (scoring/) both
need it and neither may import the other.
"""

from __future__ import annotations


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insert, delete, substitute; cost 1 each), two-row dynamic programme."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        for j, char_b in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b))
            )
        previous = current
    return previous[-1]
