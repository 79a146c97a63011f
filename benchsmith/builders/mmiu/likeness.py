"""How alike two pictures look at a glance: mean absolute difference of 32 x 32 grey thumbnails.

Used twice, on purpose the same way: the shortcut gate asks whether the candidate most like a
reference view is the gold (it was, for scene reconstruction: the frame one stride after view B
looks like view B), and the scene-reconstruction task picks distractors whose likeness to the
reference views is distributed like the golds' likeness, so that question has no answer.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image

THUMB = 32


def thumbnail(data: bytes) -> np.ndarray:
    """The 32 x 32 grey thumbnail (box filter) of encoded image bytes, as float64."""
    with Image.open(io.BytesIO(data)) as image:
        grey = image.convert("L").resize((THUMB, THUMB), Image.Resampling.BOX)
    return np.asarray(grey, dtype=np.float64)


def likeness(a: np.ndarray, b: np.ndarray) -> float:
    """Minus the mean absolute grey difference: 0 for equal thumbnails, larger is more alike."""
    return -float(np.abs(a - b).mean())
