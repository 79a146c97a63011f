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


def simple_table(table) -> bool:
    return not any(int(cell.get(attr, 1) or 1) > 1 for cell in table.find_all(["td", "th"])
                   for attr in ("rowspan", "colspan"))  # fmt: skip


def table_rows(table) -> list[list]:
    return [row.find_all(["td", "th"]) for row in table.find_all("tr")]


def render_table(table, cell_text) -> bytes:
    """A table with spans drawn as a grid (each cell spanning its rows and columns)."""
    from PIL import Image, ImageDraw

    from benchsmith.sources.exams.fonts import cjk_font

    grid: dict[tuple[int, int], bool] = {}
    placed = []
    for r, row in enumerate(table_rows(table)):
        c = 0
        for cell in row:
            while grid.get((r, c)):
                c += 1
            rows, cols = int(cell.get("rowspan", 1) or 1), int(cell.get("colspan", 1) or 1)
            for dr in range(rows):
                for dc in range(cols):
                    grid[(r + dr, c + dc)] = True
            placed.append((r, c, rows, cols, cell_text(cell)))
            c += cols
    n_rows = 1 + max(r for r, _ in grid)
    n_cols = 1 + max(c for _, c in grid)
    width, height, pad = 90, 34, 8
    image = Image.new("RGB", (n_cols * width + 2 * pad, n_rows * height + 2 * pad), "white")
    draw = ImageDraw.Draw(image)
    font = cjk_font().load(16)
    for r, c, rows, cols, text in placed:
        box = (
            pad + c * width,
            pad + r * height,
            pad + (c + cols) * width,
            pad + (r + rows) * height,
        )
        draw.rectangle(box, outline="black", width=1)
        draw.text((box[0] + 6, (box[1] + box[3]) // 2 - 9), text, fill="black", font=font)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


class Converter:
    def __init__(self, page: Path):
        self.page = page
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
            return self.image(PageImage("table", png=render_table(table, self.inline)))
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


def convert_page(page: str | Path) -> ConvertedPage:
    """One crawled page to Markdown and its images."""
    from bs4 import BeautifulSoup

    page = Path(page)
    try:
        html = page.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"the page cannot be read as UTF-8 ({exc})", path=page, fix=FIX) from exc
    soup = BeautifulSoup(html, "html.parser")
    body = soup.body or soup
    converter = Converter(page)
    markdown = tidy(converter.convert(body))
    if not markdown:
        raise SourceError("the page holds no text", path=page, fix=FIX)
    return ConvertedPage(markdown, converter.images)
