"""How clean a scanned exam page is, from its pixels: which copy of a page to keep.

The same exam page often arrives scanned more than once (a clean scan, a blurred phone photo,
a noisy fax, a skewed copy). When near-duplicate removal keeps one question of such a group,
it should keep the one read from the cleanest page, not the first id in sort order. The OCR
engine's own confidence would be one signal, but it depends on the engine; the page's pixels
give one that does not:

* **ink contrast**: the share of ink pixels that are fully dark (grey <= 48) among all inked
  pixels (grey < 208). Printed text on a clean scan is crisp; blur, resampling (rotation) and
  low resolution spread each stroke into grey, so the share drops (0.5-0.6 on the sample's
  clean pages, ~0 blurred, ~0.45 rotated).
* **paper noise**: the standard deviation of the paper pixels (grey > 200): ~1.5 grey levels on
  a clean scan, ~10 on a noisy one.

``scan_quality = ink_contrast * (1 - min(1, paper_noise / 32))``, in 0..1, higher is cleaner.
The sample's four variants of each page rank clean > rotated > noisy > blurred.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

INK_DARK, INKED, PAPER = 48, 208, 200
NOISE_SCALE = 32.0  # grey levels of paper noise that make a page worthless


def scan_quality(page: Image.Image) -> float:
    grey = np.asarray(page.convert("L"), dtype=np.float32)
    inked = grey < INKED
    if not inked.any():
        return 0.0
    contrast = float((grey <= INK_DARK).sum()) / float(inked.sum())
    paper = grey[grey > PAPER]
    noise = float(paper.std()) if paper.size else NOISE_SCALE
    return round(contrast * (1.0 - min(1.0, noise / NOISE_SCALE)), 4)
