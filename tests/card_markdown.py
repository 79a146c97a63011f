"""Dataset cards read as a Markdown renderer reads them (markdown-it, GFM tables).

A card's tables are checked the way the Hub shows them: every line that starts with ``|``
outside a code block must belong to a rendered table, and every table row must have as many
cells as its header. A blank line inside a table, or a row with a stray ``|``, fails here.
"""

from __future__ import annotations

from markdown_it import MarkdownIt


def card_body(text: str) -> str:
    """The Markdown after the YAML front matter."""
    assert text.startswith("---\n"), "a card starts with YAML front matter"
    return text.split("\n---\n", 1)[1]


def card_tables(text: str) -> list[list[list[str]]]:
    """Every table of a card as rows of cell texts (header first); asserts none is broken."""
    body = card_body(text)
    tokens = MarkdownIt("commonmark").enable("table").parse(body)
    lines = body.split("\n")
    in_tables: set[int] = set()
    code: set[int] = set()
    tables: list[list[list[str]]] = []
    for index, token in enumerate(tokens):
        if token.type in ("fence", "code_block") and token.map:
            code.update(range(*token.map))
        if token.type == "table_open":
            in_tables.update(range(*token.map))
            tables.append(_table_rows(tokens, index))
    stray = [
        f"line {n + 1}: {line}"
        for n, line in enumerate(lines)
        if line.lstrip().startswith("|") and n not in in_tables and n not in code
    ]
    assert not stray, "pipe text outside any rendered table:\n" + "\n".join(stray)
    for rows in tables:
        widths = {len(row) for row in rows}
        assert len(widths) == 1, f"table rows of different widths: {rows}"
        assert len(rows) >= 2, f"a table with a header and no rows: {rows}"
    return tables


def _table_rows(tokens, start: int) -> list[list[str]]:
    rows: list[list[str]] = []
    for token in tokens[start:]:
        if token.type == "table_close":
            break
        if token.type == "tr_open":
            rows.append([])
        elif token.type == "inline":
            rows[-1].append(token.content)
    return rows
