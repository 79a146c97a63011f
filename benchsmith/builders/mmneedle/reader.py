"""Get an MMNeedle sample together with its haystack images (documented user helper).

Sample configs store stitched ids, not pixels, so the 21 configs share 4 image configs instead
of copying tens of GB of JPEGs. This helper joins them back::

    from benchsmith.builders.mmneedle.reader import load_sample_with_images
    sample = load_sample_with_images("published/mmneedle", "m10_n2_k1", sample_id=0)
    sample["images"]   # PIL images in haystack order; sample["prompt"], sample["gold_answer"], ...
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from PIL import Image

from benchsmith.builders.mmneedle.features import haystack_config
from benchsmith.core.errors import AuditError
from benchsmith.hf.reader import read_rows


def load_sample_with_images(
    dataset_dir: str | Path, config: str, sample_id: int, split: str = "test"
) -> dict[str, Any]:
    rows = read_rows(dataset_dir, config, "sample_id", [int(sample_id)], split)
    if int(sample_id) not in rows:
        raise AuditError(
            f"sample {sample_id} not in config {config}", path=Path(dataset_dir) / "data" / config
        )
    sample = rows[int(sample_id)]
    stitched = read_rows(
        dataset_dir, haystack_config(sample["grid"]), "stitched_id", sample["haystack"], split
    )
    missing = [sid for sid in sample["haystack"] if sid not in stitched]
    if missing:
        raise AuditError(
            f"stitched images {missing} referenced by sample {sample_id} are not in {haystack_config(sample['grid'])}",
            path=dataset_dir,
        )
    sample["images"] = [
        Image.open(io.BytesIO(stitched[sid]["image"]["bytes"])) for sid in sample["haystack"]
    ]
    return sample
