"""COCO 2014 val as a :class:`~benchsmith.sources.base.Source`: sample, fetch, link, check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchsmith.core.errors import SourceError
from benchsmith.sources.base import Option, Source
from benchsmith.sources.coco.reader import ANNOTATIONS_ZIP_URL, IMAGES_ZIP_URL


class CocoSource(Source):
    name = "coco"
    title = "COCO 2014 val (captions + images)"
    layout = "OUT/annotations/captions_val2014.json and OUT/val2014/*.jpg"
    verbs = ("sample", "fetch", "link", "check", "prepare")
    sample_options = (Option("n_images", "images in the miniature, 1-990", int, 660),)
    fetch_options = (
        Option("download_dir", "where the zips are kept for reruns", Path, "data/downloads/coco"),
        Option("annotations_url", "URL of annotations_trainval2014.zip", str, ANNOTATIONS_ZIP_URL),
        Option("images_url", "URL of val2014.zip", str, IMAGES_ZIP_URL),
        Option(
            "lock",
            "lock file with each URL's size and sha256 (written on first download)",
            Path,
            "coco.lock.json",
        ),
    )

    def sample(self, out: Path, *, seed: int, n_images: int = 660, **_: Any) -> Path:
        from benchsmith.sources.coco.sample import write_sample_coco

        return write_sample_coco(out, n_images=n_images, seed=seed)

    def fetch(self, out: Path, **options: Any) -> Path:
        from benchsmith.sources.coco.fetch import fetch_coco

        return fetch_coco(
            Path(out),
            download_dir=Path(options["download_dir"]),
            annotations_url=options["annotations_url"],
            images_url=options["images_url"],
            lock_path=Path(options["lock"]),
        )

    def link(self, src: Path, out: Path) -> Path:
        from benchsmith.sources.coco.fetch import link_local_coco

        return link_local_coco(Path(src), Path(out))

    def check(self, root: Path, **_: Any) -> dict[str, Any]:
        from benchsmith.sources.coco.reader import CAPTIONS_RELPATH, IMAGES_DIRNAME, read_captions

        captions = read_captions(Path(root) / CAPTIONS_RELPATH)
        images = Path(root) / IMAGES_DIRNAME
        missing = [i.file_name for i in captions.images if not (images / i.file_name).is_file()]
        if missing:
            raise SourceError(
                f"{len(missing)} image(s) named in the captions file are missing, e.g. {missing[0]}",
                path=images,
                fix="extract val2014.zip completely (`benchsmith source fetch coco`)",
            )
        return {
            "root": str(root),
            "images": len(captions.images),
            "images_with_captions": len(captions.images_with_captions),
            "captions": sum(len(c) for c in captions.captions.values()),
            "captions_sha256": captions.sha256,
            "skipped": dict(captions.skipped),
        }


COCO = CocoSource()
