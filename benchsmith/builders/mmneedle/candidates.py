"""The COCO images a build may draw from, with their captions pre-normalised for comparisons."""

from __future__ import annotations

from dataclasses import dataclass

from benchsmith.sources.coco.reader import CocoCaption, CocoCaptions, CocoImage, normalize_caption


@dataclass
class Candidates:
    """Images with at least one caption, in the order the build draws from.

    canonical order sorts by COCO image id (independent of file order); legacy order keeps the
    order of ``images[]`` in the captions file, which is what the original scripts used.
    Captions of each image are sorted by annotation id in canonical order and kept in file
    order in legacy order (the original keeps the last listed one).
    """

    images: list[CocoImage]
    captions: list[list[CocoCaption]]
    norms: list[frozenset[str]]

    def __len__(self) -> int:
        return len(self.images)

    @classmethod
    def from_captions(cls, source: CocoCaptions, order: str) -> Candidates:
        images = source.images_with_captions
        if order == "canonical":
            images = sorted(images, key=lambda image: image.image_id)
        captions = [list(source.captions[image.image_id]) for image in images]
        if order == "canonical":
            captions = [sorted(caps, key=lambda c: c.annotation_id) for caps in captions]
        norms = [frozenset(normalize_caption(c.caption) for c in caps) for caps in captions]
        return cls(images, captions, norms)
