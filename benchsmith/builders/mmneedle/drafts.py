"""Planned samples before they are turned into table rows."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NeedleDraft:
    candidate: int  # index into Candidates
    caption_index: int  # index into that image's caption list
    location: tuple[int, int, int] | None  # (image_index, row, col), 1-based; None when absent


@dataclass(frozen=True)
class SampleDraft:
    sample_id: int
    haystack: tuple[int, ...]  # pool indices of the stitched images, in prompt order
    is_positive: bool
    needles: tuple[NeedleDraft, ...]


def slot_location(slot: int, grid: int) -> tuple[int, int, int]:
    """1-based (image_index, row, col) of a flat slot over a haystack (row-major cells)."""
    image, cell = divmod(slot, grid * grid)
    row, col = divmod(cell, grid)
    return image + 1, row + 1, col + 1


def is_positive_id(sample_id: int, n_samples: int) -> bool:
    """Ids below n/2 are positive, the rest negative (the original's 50/50 convention)."""
    return sample_id < n_samples / 2


def in_paper_eval_subset(sample_id: int, n_samples: int, num_needles: int) -> bool:
    """The samples the paper evaluated: the first 1,000 positives and 1,000 negatives for one
    needle (ids 0-999 and 5000-5999 of 10,000), the first 100 of each for several needles."""
    positives = -(-n_samples // 2)
    local = sample_id if sample_id < positives else sample_id - positives
    return local < (1000 if num_needles == 1 else 100)
