"""The ``circular`` config: every item once per rotation of its options.

Rotation ``r`` shows, at letter ``k``, the option that was at ``(k + r) mod n``; the answer
moves with it. For text options the option list rotates; for image options the candidate
images rotate (the options stay "Image 5", "Image 6", ... in order); for point options the
letters are re-drawn on the image in the rotated order. The context's choice block is
re-written to match, so each rotation is a complete item.
"""

from __future__ import annotations

from typing import Any

from benchsmith.builders.mmiu.images import image_ref, ref_params
from benchsmith.builders.mmiu.prompts import CHOICES_LEAD, choices_block


def rotate_item(row: dict[str, Any], rotation: int) -> dict[str, Any]:
    """A plan item shown with its options rotated by ``rotation`` (images without sha256
    when they change; the caller renders them)."""
    n = len(row["options"])
    order = [(k + rotation) % n for k in range(n)]
    images = list(row["images"])
    options = list(row["options"])
    kind = row["option_kind"]
    if kind == "text":
        options = [row["options"][k] for k in order]
    elif kind == "image":
        first = len(images) - n
        candidates = images[first:]
        images = images[:first] + [candidates[k] for k in order]
    else:
        marked = images[-1]
        params = ref_params(marked)
        fixed = [m for m in params["marks"] if len(m[0]) > 1]  # REF and other labels stay
        letters = [m for m in params["marks"] if len(m[0]) == 1]
        moved = [[chr(ord("A") + slot), *letters[k][1:]] for slot, k in enumerate(order)]
        images[-1] = image_ref("scannet_marked", scene=marked["scene"], frame=marked["frame"],
                               marks=fixed + moved)  # fmt: skip
    answer_index = order.index(row["answer_index"])
    head = row["context"].rsplit("\n" + CHOICES_LEAD, 1)[0]
    return {
        **row,
        "id": f"{row['id']}/r{rotation}",
        "item_id": row["id"],
        "rotation": rotation,
        "options": options,
        "images": images,
        "answer_index": answer_index,
        "answer": chr(ord("A") + answer_index),
        "context": head + "\n" + choices_block(options),
        "option_methods": [row["option_methods"][k] for k in order],
    }
