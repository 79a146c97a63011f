"""Page cleanliness from pixels: a clean scan ranks above blurred, noisy and skewed copies."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from benchsmith.builders.multi.scan_quality import scan_quality


def clean_page() -> Image.Image:
    page = Image.new("L", (600, 400), 255)
    draw = ImageDraw.Draw(page)
    font = ImageFont.load_default(size=28)
    for k in range(8):
        draw.text(
            (30, 20 + 45 * k), f"{k + 1}. The quick brown fox jumps (A) 42", fill=0, font=font
        )
    return page


def copies(page: Image.Image) -> dict[str, Image.Image]:
    rng = np.random.default_rng(0)
    noise = rng.normal(0, 12, size=(page.height, page.width))
    noisy = np.clip(np.asarray(page, dtype=np.float64) + noise, 0, 255).astype(np.uint8)
    return {
        "blurred": page.filter(ImageFilter.GaussianBlur(2)),
        "noisy": Image.fromarray(noisy),
        "rotated": page.rotate(2.5, resample=Image.Resampling.BICUBIC, fillcolor=255),
    }


def test_the_clean_page_scores_highest():
    page = clean_page()
    clean = scan_quality(page)
    scores = {name: scan_quality(copy) for name, copy in copies(page).items()}
    assert 0 < max(scores.values()) < clean <= 1, (clean, scores)
    assert scores["blurred"] < 0.1  # the strokes turned grey


def test_a_blank_or_colour_page_is_handled():
    assert scan_quality(Image.new("L", (50, 50), 255)) == 0.0
    assert 0 <= scan_quality(clean_page().convert("RGB")) <= 1
