"""Small pictures for the report: a thumbnail per item image (inline in the page) and a contact
sheet per config (a PNG beside the page: the spread of items, their first image each)."""

from __future__ import annotations

import base64
import io

THUMB_SIDE = 150
SHEET_CELL, SHEET_COLUMNS, LABEL_HEIGHT = 160, 6, 14


def _decoded(data: bytes, side: int | None = None):
    """The picture as RGB; a JPEG meant for a ``side``-pixel thumbnail is decoded at a reduced
    scale by libjpeg itself (``draft``): MMNeedle's 2048-pixel haystacks decode 8x smaller."""
    from PIL import Image

    image = Image.open(io.BytesIO(data))
    if side is not None and image.format == "JPEG":
        image.draft("RGB", (side, side))
    image.load()
    return image.convert("RGB")


def thumbnail(data: bytes, side: int = THUMB_SIDE) -> bytes:
    """A JPEG at most ``side`` pixels on its longer edge (a picture that does not decode is a
    grey square: the report still opens and says which item it was)."""
    from PIL import Image

    try:
        image = _decoded(data, side)
    except Exception:  # noqa: BLE001 - shown, not fatal: the audit is where a picture is judged
        image = Image.new("RGB", (side, side), (200, 200, 200))
    image.thumbnail((side, side))
    out = io.BytesIO()
    image.save(out, format="JPEG", quality=82)
    return out.getvalue()


def data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def contact_sheet(cells: list[tuple[str, bytes | None]]) -> bytes:
    """A grid of ``(label, first image)`` cells, labels in Pillow's own font (ASCII ids)."""
    from PIL import Image, ImageDraw, ImageFont

    columns = min(SHEET_COLUMNS, max(1, len(cells)))
    rows = max(1, -(-len(cells) // columns))
    sheet = Image.new("RGB", (columns * SHEET_CELL, rows * (SHEET_CELL + LABEL_HEIGHT)), "white")
    draw = ImageDraw.Draw(sheet)
    font = ImageFont.load_default()
    for index, (label, data) in enumerate(cells):
        x = (index % columns) * SHEET_CELL
        y = (index // columns) * (SHEET_CELL + LABEL_HEIGHT)
        if data is not None:
            picture = _decoded(thumbnail(data, SHEET_CELL - 8))
            sheet.paste(picture, (x + (SHEET_CELL - picture.width) // 2,
                                  y + (SHEET_CELL - picture.height) // 2))  # fmt: skip
        text = label.encode("ascii", "replace").decode("ascii")[:26]
        draw.text((x + 4, y + SHEET_CELL), text, fill="black", font=font)
    out = io.BytesIO()
    sheet.save(out, format="PNG")
    return out.getvalue()
