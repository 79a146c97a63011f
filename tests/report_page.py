"""Reading a report page back as a browser would see its structure: every picture, link and
script, the summary table and the item cards (stdlib ``html.parser``, no browser needed)."""

from __future__ import annotations

import base64
import io
from dataclasses import dataclass, field
from html.parser import HTMLParser

from PIL import Image


@dataclass
class Card:
    sample_id: str
    classes: str
    gold: str = ""
    reply: str = ""
    images: int = 0


@dataclass
class Page:
    images: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    scripts: int = 0
    stylesheets: list[str] = field(default_factory=list)
    summary: dict[str, tuple[str, int]] = field(default_factory=dict)
    cards: list[Card] = field(default_factory=list)
    text: str = ""


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.page = Page()
        self.card: Card | None = None
        self.depth = 0
        self.in_gold = self.in_reply = self.in_summary_row = False
        self.cells: list[str] = []
        self.cell: list[str] | None = None
        self.table = 0
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "img":
            self.page.images.append(a.get("src", ""))
            if self.card:
                self.card.images += 1
        if tag == "a":
            self.page.links.append(a.get("href", ""))
        if tag == "script":
            self.page.scripts += 1
        if tag == "link":
            self.page.stylesheets.append(a.get("href", ""))
        if tag == "div" and "card" in (a.get("class") or "").split():
            self.card = Card(a.get("data-id", ""), a.get("class", ""))
            self.depth = 0
        if self.card is not None and tag == "div":
            self.depth += 1
        if tag == "span" and a.get("class") == "gold":
            self.in_gold = True
        if tag == "div" and a.get("class") == "reply":
            self.in_reply = True
        if tag == "table":
            self.table += 1
        if tag == "tr" and self.table == 1:
            self.cells = []
        if tag in ("td", "th") and self.table == 1:
            self.cell = []

    def handle_endtag(self, tag):
        if tag == "span":
            self.in_gold = False
        if tag in ("td", "th") and self.cell is not None:
            self.cells.append("".join(self.cell).strip())
            self.cell = None
        if tag == "tr" and self.table == 1 and self.cells and self.cells[0] != "config":
            self.page.summary[self.cells[0]] = (self.cells[1], int(self.cells[2]))
        if tag == "div" and self.card is not None:
            self.in_reply = False
            self.depth -= 1
            if self.depth == 0:
                self.page.cards.append(self.card)
                self.card = None

    def handle_data(self, data):
        self.text.append(data)
        if self.cell is not None:
            self.cell.append(data)
        if self.card is not None and self.in_gold:
            self.card.gold += data
        if self.card is not None and self.in_reply:
            self.card.reply += data


def read_page(html: str) -> Page:
    reader = _Reader()
    reader.feed(html)
    reader.page.text = "".join(reader.text)
    return reader.page


def decode_data_uri(src: str) -> Image.Image:
    """The picture a ``data:image/...;base64,`` source holds (an error for any other src)."""
    head, _, payload = src.partition(",")
    assert head.startswith("data:image/") and head.endswith(";base64"), src[:60]
    image = Image.open(io.BytesIO(base64.b64decode(payload)))
    image.load()
    return image
