"""The exact MMNeedle instruction text and gold-answer strings (spec section 4).

The wording matches the original ``needle.py`` character for character, including the
"1*1 subimage" wording for N=1, so scores stay comparable with the paper.
"""

from __future__ import annotations

from collections.abc import Sequence


def build_prompt(num_images: int, grid: int, captions: Sequence[str]) -> str:
    """Instruction for one sample: the task description, then one caption line per needle."""
    images_word = "images" if num_images > 1 else "image"
    subimages_word = "subimages" if grid > 1 else "subimage"
    head = f"Given {num_images} {images_word} indexed from 1 to {num_images}, each divided into {grid}*{grid} {subimages_word}, "
    if len(captions) == 1:
        return (
            head
            + "identify the subimage that best matches the provided caption. Respond with 'index, row, column' and "
            "nothing else. For example, '1, 2, 3' indicates the subimage in the first image, second row, and third "
            "column. If no match is found, respond only with '-1'." + "\nCaption: " + captions[0]
        )
    answer_format = "; ".join(
        f"index_{i}, row_{i}, column_{i}" for i in range(1, len(captions) + 1)
    )
    text = (
        head
        + f"identify the subimages that best match the provided {len(captions)} captions. Respond in the format: "
        f"{answer_format}. Only provide this information. For example, '1, 2, 3' indicates the subimage in the first "
        "image, second row, and third column. If no subimage matches a caption, respond with '-1' for that caption."
    )
    return text + "".join(
        f"\nCaption_{i}: {caption}" for i, caption in enumerate(captions, start=1)
    )


def gold_answer(locations: Sequence[tuple[int, int, int] | None]) -> str:
    """``"i, r, c"`` per needle (1-based), ``"-1"`` for an absent one, joined by ``"; "``."""
    return "; ".join("-1" if loc is None else f"{loc[0]}, {loc[1]}, {loc[2]}" for loc in locations)
