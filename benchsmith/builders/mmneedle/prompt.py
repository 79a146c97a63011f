"""The exact MMNeedle instruction text and gold-answer strings (spec section 4).

The wording matches the original ``needle.py`` character for character, including the
"1*1 subimage" wording for N=1, so scores stay comparable with the paper.

A prompt is a fixed head per (M, N, K) followed by one labelled line per caption; the plan
builds 210,000 of them, so besides the one-sample functions there are column versions
(:func:`prompt_column`, :func:`gold_answer_column`) made of the same pieces.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl


def prompt_head(num_images: int, grid: int, num_captions: int) -> str:
    """Everything before the caption lines: the task description for M images of N x N."""
    images_word = "images" if num_images > 1 else "image"
    subimages_word = "subimages" if grid > 1 else "subimage"
    head = f"Given {num_images} {images_word} indexed from 1 to {num_images}, each divided into {grid}*{grid} {subimages_word}, "
    if num_captions == 1:
        return (
            head
            + "identify the subimage that best matches the provided caption. Respond with 'index, row, column' and "
            "nothing else. For example, '1, 2, 3' indicates the subimage in the first image, second row, and third "
            "column. If no match is found, respond only with '-1'."
        )
    answer_format = "; ".join(f"index_{i}, row_{i}, column_{i}" for i in range(1, num_captions + 1))
    return (
        head
        + f"identify the subimages that best match the provided {num_captions} captions. Respond in the format: "
        f"{answer_format}. Only provide this information. For example, '1, 2, 3' indicates the subimage in the first "
        "image, second row, and third column. If no subimage matches a caption, respond with '-1' for that caption."
    )


def caption_label(position: int, num_captions: int) -> str:
    """The line opener before caption ``position`` (1-based): ``Caption`` alone for one."""
    return "\nCaption: " if num_captions == 1 else f"\nCaption_{position}: "


def build_prompt(num_images: int, grid: int, captions: Sequence[str]) -> str:
    """Instruction for one sample: the task description, then one caption line per needle."""
    k = len(captions)
    return prompt_head(num_images, grid, k) + "".join(
        caption_label(i, k) + caption for i, caption in enumerate(captions, start=1)
    )


def gold_answer(locations: Sequence[tuple[int, int, int] | None]) -> str:
    """``"i, r, c"`` per needle (1-based), ``"-1"`` for an absent one, joined by ``"; "``."""
    return "; ".join("-1" if loc is None else f"{loc[0]}, {loc[1]}, {loc[2]}" for loc in locations)


def prompt_column(num_images: int, grid: int, captions: pl.Series, k: int) -> pl.Series:
    """:func:`build_prompt` for consecutive runs of ``k`` captions (one prompt per run)."""
    labels = pl.Series([caption_label(i, k) for i in range(1, k + 1)] * (len(captions) // k))
    lines = (labels + captions).reshape((len(captions) // k, k)).cast(pl.List(pl.String))
    return prompt_head(num_images, grid, k) + lines.list.join("")


def gold_answer_column(locations: pl.DataFrame, k: int) -> pl.Series:
    """:func:`gold_answer` for consecutive runs of ``k`` needles; ``locations`` has the
    columns image_index, row, col (null for an absent needle)."""
    parts = locations.select(
        pl.when(pl.col("image_index").is_null())
        .then(pl.lit("-1"))
        .otherwise(pl.concat_str("image_index", "row", "col", separator=", "))
    ).to_series()
    return parts.reshape((len(parts) // k, k)).cast(pl.List(pl.String)).list.join("; ")
