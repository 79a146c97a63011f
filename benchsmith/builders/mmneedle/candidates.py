"""The COCO images a build may draw from, with their captions pre-normalised for comparisons."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from benchsmith.sources.coco.reader import CocoCaption, CocoCaptions, CocoImage, normalize_caption


@dataclass
class Candidates:
    """Images with at least one caption, in the order the build draws from.

    canonical order sorts by COCO image id (independent of file order); legacy order keeps the
    order of ``images[]`` in the captions file, which is what the original scripts used.
    Captions of each image are sorted by annotation id in canonical order and kept in file
    order in legacy order (the original keeps the last listed one).

    Caption equality is what the canonical sampler checks over and over, so every caption's
    normalised text gets an integer id: caption ``i`` of image ``c`` is
    ``norm_ids[caption_offsets[c] + i]``; the distinct ids of image ``c`` are
    ``image_norms[image_norm_offsets[c]:image_norm_offsets[c + 1]]`` (sorted).
    """

    images: list[CocoImage]
    captions: list[list[CocoCaption]]
    caption_offsets: np.ndarray
    norm_ids: np.ndarray
    image_norm_offsets: np.ndarray
    image_norms: np.ndarray
    n_norms: int

    def __len__(self) -> int:
        return len(self.images)

    def flat_caption_index(self, candidate: np.ndarray, caption: np.ndarray) -> np.ndarray:
        """Position of (image, caption index) pairs in the flat caption order (``norm_ids``)."""
        return self.caption_offsets[candidate] + caption

    @cached_property
    def caption_ids(self) -> np.ndarray:
        """COCO annotation id of every caption, in the flat caption order."""
        return np.fromiter(
            (c.annotation_id for caps in self.captions for c in caps), np.int64, len(self.norm_ids)
        )

    @cached_property
    def image_ids(self) -> np.ndarray:
        return np.fromiter((image.image_id for image in self.images), np.int64, len(self.images))

    @classmethod
    def from_captions(
        cls, source: CocoCaptions, order: str, set_aside: Collection[int] = ()
    ) -> Candidates:
        """``set_aside``: COCO ids left out (twins of a kept image: one picture, one id)."""
        images = source.images_with_captions
        if set_aside:
            images = [image for image in images if image.image_id not in set_aside]
        if order == "canonical":
            images = sorted(images, key=lambda image: image.image_id)
        captions = [list(source.captions[image.image_id]) for image in images]
        if order == "canonical":
            captions = [sorted(caps, key=lambda c: c.annotation_id) for caps in captions]
        ids: dict[str, int] = {}
        norm_ids = [
            ids.setdefault(normalize_caption(c.caption), len(ids))
            for caps in captions
            for c in caps
        ]
        counts = np.fromiter((len(caps) for caps in captions), dtype=np.int64, count=len(captions))
        caption_offsets = np.concatenate(([0], np.cumsum(counts)))
        norm_array = np.asarray(norm_ids, dtype=np.int64)
        distinct = [
            np.unique(norm_array[a:b])
            for a, b in zip(caption_offsets[:-1], caption_offsets[1:], strict=True)
        ]
        image_norm_offsets = np.concatenate(([0], np.cumsum([len(d) for d in distinct]))).astype(
            np.int64
        )
        image_norms = (
            np.concatenate(distinct).astype(np.int64) if distinct else np.empty(0, np.int64)
        )
        return cls(
            images, captions, caption_offsets, norm_array, image_norm_offsets, image_norms, len(ids)
        )
