"""Planned samples before they are turned into table rows: one set of arrays per config.

Arrays rather than one object per sample because a full plan has 210,000 samples and every
later step (QA flags, table columns, the images a plan uses) is a whole-column operation.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ABSENT = -1  # slot of a needle that is not in the haystack


@dataclass(frozen=True)
class PlannedSamples:
    """Samples ``0 .. n-1`` of one config.

    ``haystack[s]``: pool indices of the stitched images, in prompt order (n x M).
    ``candidate[s, k]`` / ``caption[s, k]``: needle k's image (index into Candidates) and the
    index of its caption in that image's caption list (n x K).
    ``slot[s, k]``: flat slot of a present needle over the haystack's cells, row-major per
    image, or :data:`ABSENT` (n x K).
    """

    haystack: np.ndarray
    candidate: np.ndarray
    caption: np.ndarray
    slot: np.ndarray

    def __len__(self) -> int:
        return len(self.haystack)

    @property
    def is_positive(self) -> np.ndarray:
        return is_positive_id(np.arange(len(self)), len(self))


def slot_location(slot: int, grid: int) -> tuple[int, int, int]:
    """1-based (image_index, row, col) of a flat slot over a haystack (row-major cells)."""
    image, cell = divmod(slot, grid * grid)
    row, col = divmod(cell, grid)
    return image + 1, row + 1, col + 1


def is_positive_id(sample_id, n_samples: int):
    """Ids below n/2 are positive, the rest negative (the original's 50/50 convention)."""
    return sample_id < n_samples / 2


def in_paper_eval_subset(sample_id, n_samples: int, num_needles: int):
    """The samples the paper evaluated: the first 1,000 positives and 1,000 negatives for one
    needle (ids 0-999 and 5000-5999 of 10,000), the first 100 of each for several needles.

    Takes one id or an array of ids."""
    positives = -(-n_samples // 2)
    local = np.where(sample_id < positives, sample_id, sample_id - positives)
    return local < (1000 if num_needles == 1 else 100)
