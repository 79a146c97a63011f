"""Cheap signals per option of an MMIU item, for the shortcut gate's image-aware, position and
cross-item baselines (:mod:`.shortcuts`).

None of these needs the skill a task asks for; each is a way the original MMIU's golds could be
told apart, or ours were before the distractors were rebuilt:

- **image options** (a candidate picture per option): file size, and how alike the candidate
  is to the reference views (mean absolute difference of 32 x 32 grey thumbnails, negated so
  larger means more alike) — the frame one stride after view B looks like view B;
- **point options** (lettered points on a view): distance from REF's pixel position on the
  other view (a point drawn near REF is the gold when distractors are far in 3D), and from the
  image centre;
- **piece orders** (jigsaw): the file size and the grey texture of the pieces an order puts in
  the top row (plain sky compresses well);
- **text options**: length, the count, size and rounding of the numbers in it, and how often
  the same option appears in other items (golds that recur across items of one scene).

:func:`option_signals` returns, per item, named per-option values; the gate turns each into a
pick-the-largest and pick-the-smallest rule, and all of them together into the learned model.
"""

from __future__ import annotations

import io
import math
from collections.abc import Callable, Sequence
from typing import Any

from PIL import Image

from benchsmith.builders.mmiu.images import ref_params
from benchsmith.builders.mmiu.likeness import likeness, thumbnail
from benchsmith.options.cross_item_rules import NUMBER, option_text_features, recurrence_counts


def _points(ref: dict[str, Any]) -> dict[str, tuple[float, float]]:
    return {str(m[0]): (float(m[1]), float(m[2])) for m in ref_params(ref).get("marks", [])}


def point_signals(row: dict[str, Any], size: tuple[int, int]) -> list[dict[str, float]]:
    marks = {}
    for ref in row["images"]:
        marks.update(_points(ref))
    ref_xy = marks.get("REF")
    centre = (size[0] / 2, size[1] / 2)
    out = []
    for k in range(len(row["options"])):
        x, y = marks[chr(ord("A") + k)]
        signal = {"distance_to_centre": math.dist((x, y), centre)}
        if ref_xy is not None:
            signal["distance_to_ref_position"] = math.dist((x, y), ref_xy)
        out.append(signal)
    return out


def image_option_signals(row: dict[str, Any], data: list[bytes]) -> list[dict[str, float]]:
    n = len(row["options"])
    references, candidates = data[:-n], data[-n:]
    ref_thumbs = [thumbnail(d) for d in references]
    out = []
    for candidate in candidates:
        thumb = thumbnail(candidate)
        alike = [likeness(thumb, r) for r in ref_thumbs] or [0.0]
        out.append({
            "file_bytes": float(len(candidate)),
            "likeness_to_a_reference": max(alike),
            "likeness_to_last_reference": alike[-1],
        })  # fmt: skip
    return out


def piece_order_signals(row: dict[str, Any], data: list[bytes]) -> list[dict[str, float]]:
    """Per option (an order naming, per grid cell, the image that belongs there): the pieces it
    puts in the top row, by file size and grey texture."""
    grid = int(math.isqrt(len(data)))
    texture = [float(thumbnail(d).std()) for d in data]
    out = []
    for option in row["options"]:
        order = [int(m.group(0)) - 1 for m in NUMBER.finditer(option)]
        top = [order[c] for c in range(min(grid, len(order))) if 0 <= order[c] < len(data)]
        out.append({
            "top_row_file_bytes": float(sum(len(data[i]) for i in top)),
            "top_row_texture": float(sum(texture[i] for i in top)),
        })  # fmt: skip
    return out


def option_signals(
    rows: Sequence[dict[str, Any]], render: Callable[[dict[str, Any]], bytes]
) -> list[list[dict[str, float]]]:
    """Per item, per option: every cheap signal that applies to the item's kind of options."""
    recurrence = recurrence_counts([r["options"] for r in rows])
    out = []
    for row, recurs in zip(rows, recurrence, strict=True):
        kind = row.get("option_kind", "text")
        signals = [{"recurrence_in_other_items": float(c)} for c in recurs]
        if kind == "text":
            for signal, option in zip(signals, row["options"], strict=True):
                signal.update(option_text_features(option))
        if kind == "image":
            data = [render(ref) for ref in row["images"]]
            for signal, extra in zip(signals, image_option_signals(row, data), strict=True):
                signal.update(extra)
        elif kind == "point":
            with Image.open(io.BytesIO(render(row["images"][-1]))) as image:
                size = image.size
            for signal, extra in zip(signals, point_signals(row, size), strict=True):
                signal.update(extra)
        elif row["task"] == "jigsaw_puzzle_solving":
            data = [render(ref) for ref in row["images"]]
            for signal, extra in zip(signals, piece_order_signals(row, data), strict=True):
                signal.update(extra)
        out.append(signals)
    return out


# Signals that are the task's own visual skill, reported but never failing a config: where the
# smooth pieces go is how a person solves a jigsaw (the sky goes on top). On the sample's images
# (plain sky above every scene, by design of their captions) it finds the top row nearly always.
# Likewise, which depth map has view B's layout is what depth estimation asks: a candidate depth
# map is compared with the colour views by their structure, which is the skill.
CONTENT_SIGNALS = {
    "jigsaw_puzzle_solving": frozenset({"top_row_texture"}),
    "3d_depth_estimation": frozenset({"likeness_to_a_reference", "likeness_to_last_reference"}),
}


def signal_names(signals: Sequence[Sequence[dict[str, float]]]) -> list[str]:
    """Names every option of every item has (a rule needs the value everywhere)."""
    names: set[str] | None = None
    for item in signals:
        for option in item:
            names = set(option) if names is None else names & set(option)
    return sorted(names or ())
