"""Raw question pages (HTML as crawled) to MULTI's Markdown, with a real HTML parser.

The paper's pre-processing, made explicit: layout goes (alignment, colour, fonts, classes:
attributes are never carried over), ``<u>`` stays (Markdown has no underline; MULTI's text keeps
the tag), ``<b>``/``<strong>`` become ``**...**`` and ``<i>``/``<em>`` ``*...*``, ``<br>`` and
block elements become line breaks, ``<sup>``/``<sub>`` become ``$^{...}$``/``$_{...}$``, MathML
becomes inline LaTeX (fractions, powers, indices, roots, rows), ``<img>`` becomes ``[IMAGE_n]``
(1-based, in reading order), a simple table becomes a Markdown table, and a table Markdown cannot
hold (``rowspan``/``colspan``) is rendered to a PNG with the CJK font and becomes ``[IMAGE_n]``
too. Entities are decoded; broken nesting is repaired by the parser (``html.parser``), never
guessed at. An ``<img>`` whose file is missing is an error naming the page and the file.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from benchsmith.core.errors import SourceError

BLOCKS = {"p", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "center", "section"}
DROP = {"head", "style", "script", "title", "meta", "link"}
MATH_OPERATORS = {"×": r"\times ", "÷": r"\div ", "≤": r"\le ", "≥": r"\ge ", "≠": r"\ne ",
                  "±": r"\pm ", "·": r"\cdot ", "∠": r"\angle ", "°": r"^{\circ}"}  # fmt: skip
FIX = "check the page's HTML and the files it references"


@dataclass
class PageImage:
    """An image of a converted page: a file it referenced, or a table rendered to PNG."""

    source: str  # "file" | "table"
    file: str = ""  # relative to the page's folder (source "file")
    png: bytes = b""  # the rendered table (source "table")


@dataclass
class ConvertedPage:
    markdown: str
    images: list[PageImage] = field(default_factory=list)


def mathml_to_latex(node) -> str:
    """The LaTeX of a MathML element (the subset question banks use)."""
    from bs4 import NavigableString, Tag

    if isinstance(node, NavigableString):
        return "".join(MATH_OPERATORS.get(c, c) for c in str(node).strip())
    assert isinstance(node, Tag)
    parts = [c for c in node.children if not (isinstance(c, NavigableString) and not c.strip())]
    inner = [mathml_to_latex(c) for c in parts]
    name = node.name
    if name == "mfrac" and len(inner) == 2:
        return rf"\frac{{{inner[0]}}}{{{inner[1]}}}"
    if name == "msup" and len(inner) == 2:
        return f"{{{inner[0]}}}^{{{inner[1]}}}"
    if name == "msub" and len(inner) == 2:
        return f"{{{inner[0]}}}_{{{inner[1]}}}"
    if name == "msubsup" and len(inner) == 3:
        return f"{{{inner[0]}}}_{{{inner[1]}}}^{{{inner[2]}}}"
    if name == "msqrt":
        return rf"\sqrt{{{''.join(inner)}}}"
    if name == "mroot" and len(inner) == 2:
        return rf"\sqrt[{inner[1]}]{{{inner[0]}}}"
    return "".join(inner)


MAX_COLSPAN, MAX_ROWSPAN = 1000, 65534  # the HTML standard's own limits
DEFAULT_MAX_TABLE_CELLS = 10_000  # grid cells (rows x columns after spans) a drawn table may have


def span(cell, attr: str) -> int:
    """A cell's ``rowspan``/``colspan`` read as browsers do: leading digits, else 1; clamped to
    the standard's limits (``rowspan=0`` runs to the table's end, clamped by the caller)."""
    match = re.match(r"\s*(\d+)", str(cell.get(attr) or ""))
    value = int(match.group(1)[:6]) if match else 1
    if attr == "rowspan":
        return MAX_ROWSPAN if value == 0 else min(max(value, 1), MAX_ROWSPAN)
    return min(max(value, 1), MAX_COLSPAN)


def simple_table(table) -> bool:
    return not any(span(cell, attr) > 1 for cell in table.find_all(["td", "th"])
                   for attr in ("rowspan", "colspan"))  # fmt: skip


def _next_free(column: int, taken: list[tuple[int, int]]) -> int:
    moved = True
    while moved:
        moved = False
        for start, end in taken:
            if start <= column < end:
                column, moved = end, True
    return column


def layout_table(rows: list[list]) -> tuple[list[tuple[int, int, int, int, object]], int, int]:
    """Cells placed on the table's grid as HTML places them: ``(row, col, rows, cols, cell)``,
    and the grid's size. A rowspan ends at the table's last row and a colspan at 1000, and the
    work and memory grow with the cells, never with the spans (``rowspan=99999
    colspan=99999`` on one cell used to fill a grid of ten billion entries)."""
    placed = []
    active: list[tuple[int, int, int]] = []  # (first row after the span, first col, end col)
    n_cols = 0
    for r, row in enumerate(rows):
        active = [a for a in active if a[0] > r]
        taken = [(start, end) for _, start, end in active]
        column = 0
        for cell in row:
            column = _next_free(column, taken)
            rowspan = min(span(cell, "rowspan"), len(rows) - r)
            colspan = span(cell, "colspan")
            placed.append((r, column, rowspan, colspan, cell))
            if rowspan > 1:
                active.append((r + rowspan, column, column + colspan))
            column += colspan
            n_cols = max(n_cols, column)
    return placed, len(rows), n_cols


def table_rows(table) -> list[list]:
    return [row.find_all(["td", "th"]) for row in table.find_all("tr")]


def render_table(
    table, cell_text, max_cells: int = DEFAULT_MAX_TABLE_CELLS, page: Path | None = None
) -> bytes:
    """A table with spans drawn as a grid (each cell spanning its rows and columns); a table
    whose grid has more than ``max_cells`` cells is refused naming the page (the caller counts
    the page as a skip), so one hostile page cannot take the machine's memory."""
    from PIL import Image, ImageDraw

    from benchsmith.sources.exams.fonts import cjk_font

    placed, n_rows, n_cols = layout_table(table_rows(table))
    if not placed:
        return b""
    if n_rows * n_cols > max_cells:
        raise SourceError(
            f"a table of {n_rows} x {n_cols} cells after its spans (limit {max_cells} cells)",
            path=page,
            fix="check the page's rowspan/colspan values, or raise multi.ocr.max_table_cells",
        )
    width, height, pad = 90, 34, 8
    image = Image.new("RGB", (n_cols * width + 2 * pad, n_rows * height + 2 * pad), "white")
    draw = ImageDraw.Draw(image)
    font = cjk_font().load(16)
    for r, c, rows, cols, cell in placed:
        box = (
            pad + c * width,
            pad + r * height,
            pad + (c + cols) * width,
            pad + (r + rows) * height,
        )
        draw.rectangle(box, outline="black", width=1)
        draw.text((box[0] + 6, (box[1] + box[3]) // 2 - 9), cell_text(cell), fill="black",
                  font=font)  # fmt: skip
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


class Converter:
    def __init__(self, page: Path, max_table_cells: int = DEFAULT_MAX_TABLE_CELLS):
        self.page = page
        self.max_table_cells = max_table_cells
        self.images: list[PageImage] = []

    def image(self, item: PageImage) -> str:
        self.images.append(item)
        return f"[IMAGE_{len(self.images)}]"

    def children(self, node) -> str:
        return "".join(self.convert(child) for child in node.children)

    def inline(self, node) -> str:
        """The Markdown of a node's content on one line (cells, sub/superscripts)."""
        return re.sub(r"\s*\n\s*", " ", self.children(node)).strip()

    def convert(self, node) -> str:
        from bs4 import Comment, NavigableString, Tag

        if isinstance(node, Comment):
            return ""
        if isinstance(node, NavigableString):
            return re.sub(r"[ \t\r\n\u00a0]+", " ", str(node))
        assert isinstance(node, Tag)
        name = node.name
        if name in DROP:
            return ""
        if name == "br":
            return "\n"
        if name == "img":
            src = node.get("src") or ""
            if not (self.page.parent / src).is_file():
                raise SourceError(f"image {src!r} of the page is missing",
                                  path=self.page.parent / src, fix=FIX)  # fmt: skip
            return self.image(PageImage("file", file=src))
        if name == "math":
            return f"${mathml_to_latex(node)}$"
        if name == "sup":
            return f"$^{{{self.inline(node)}}}$"
        if name == "sub":
            return f"$_{{{self.inline(node)}}}$"
        if name == "table":
            return "\n" + self.table(node) + "\n"
        content = self.children(node)
        if name in ("b", "strong"):
            text = content.strip()
            return f"**{text}**" if text else ""
        if name in ("i", "em"):
            text = content.strip()
            return f"*{text}*" if text else ""
        if name == "u":
            return f"<u>{content}</u>"
        if name in BLOCKS:
            return "\n" + content.strip() + "\n"
        return content

    def table(self, table) -> str:
        if not simple_table(table):
            png = render_table(table, self.inline, self.max_table_cells, self.page)
            return self.image(PageImage("table", png=png))
        rows = [
            [self.inline(cell).replace("|", r"\|") for cell in row] for row in table_rows(table)
        ]
        if not rows:
            return ""
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        lines = ["| " + " | ".join(rows[0]) + " |", "|" + "---|" * width]
        lines += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        return "\n".join(lines)


WIDE = "\u3000-\u303f\u3400-\u9fff\uff00-\uffef"  # CJK characters and full-width punctuation
BETWEEN_WIDE = re.compile(f"(?<=[{WIDE}]) +(?=[{WIDE}])")


def tidy(text: str) -> str:
    """One space at most, none between two CJK characters (a line break in the source between
    Chinese characters is not a space), no blank lines."""
    lines = [
        BETWEEN_WIDE.sub("", re.sub(r"[ \t]+", " ", line)).strip() for line in text.split("\n")
    ]
    text = "\n".join(lines)
    return re.sub(r"\n{2,}", "\n", text).strip()


def convert_page(page: str | Path, max_table_cells: int = DEFAULT_MAX_TABLE_CELLS) -> ConvertedPage:
    """One crawled page to Markdown and its images."""
    from bs4 import BeautifulSoup

    page = Path(page)
    try:
        html = page.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"the page cannot be read as UTF-8 ({exc})", path=page, fix=FIX) from exc
    soup = BeautifulSoup(html, "html.parser")
    body = soup.body or soup
    converter = Converter(page, max_table_cells)
    markdown = tidy(converter.convert(body))
    if not markdown:
        raise SourceError("the page holds no text", path=page, fix=FIX)
    return ConvertedPage(markdown, converter.images)
