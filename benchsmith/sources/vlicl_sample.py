"""All raw sources of the VL-ICL sample profile, written in their real formats.

The sample profile must run offline in seconds, so the licence-gated MiniImageNet and the
18 GB CLEVR are replaced by miniatures in the exact same layouts; everything downstream (the
VL-ICL builder, publishing, audit) runs unchanged on them. Operator images need no source:
they are rendered from a pinned font (``operator_images``).
"""

from __future__ import annotations

from pathlib import Path

from benchsmith.sources.clevr_sample import write_sample_clevr
from benchsmith.sources.miniimagenet_sample import write_sample_miniimagenet

MINIIMAGENET_DIRNAME = "miniimagenet"
CLEVR_PARENT_DIRNAME = "clevr"


def write_vlicl_sample_sources(root: str | Path, seed: int = 0) -> dict[str, Path]:
    """Write ``root/miniimagenet`` (Ravi layout, flat) and ``root/clevr/CLEVR_v1.0``.

    Returns the folders the readers take: ``{"miniimagenet": root/miniimagenet,
    "clevr": root/clevr/CLEVR_v1.0}`` (for ``read_miniimagenet`` and ``read_clevr_scenes``).
    """
    root = Path(root)
    miniimagenet = write_sample_miniimagenet(root / MINIIMAGENET_DIRNAME, layout="flat", seed=seed)
    clevr = write_sample_clevr(root / CLEVR_PARENT_DIRNAME, seed=seed)
    return {"miniimagenet": miniimagenet, "clevr": clevr}
