"""TextOCR v0.1 as a :class:`~benchsmith.sources.base.Source`: sample, link, check.

No ``fetch`` yet: the user downloads ``TextOCR_0.1_{train,val}.json`` and
``train_val_images.zip`` from the TextOCR site (``reader.ANNOTATIONS_URL``, ``IMAGES_URL``),
unpacks the zip beside the JSON files and links that folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchsmith.core.errors import SourceError
from benchsmith.sources.base import Option, Source
from benchsmith.sources.textocr.reader import (
    ANNOTATIONS_URL,
    IMAGES_DIRNAME,
    IMAGES_URL,
    TEXTOCR_DIRNAME,
    annotations_path,
)

GET_IT = (
    f"download {ANNOTATIONS_URL.format(split='{train,val}')} and {IMAGES_URL}, unpack the zip "
    f"beside the two JSON files (it makes {IMAGES_DIRNAME}/)"
)


class TextocrSource(Source):
    name = "textocr"
    title = "TextOCR v0.1 (word annotations + Open Images)"
    layout = f"OUT/{TEXTOCR_DIRNAME}/TextOCR_0.1_{{train,val}}.json and OUT/{TEXTOCR_DIRNAME}/{IMAGES_DIRNAME}/"
    verbs = ("sample", "link", "check", "prepare")
    not_fetched = f"is not downloaded by benchsmith: {GET_IT}"
    sample_options = (
        Option("n_train", "train images in the miniature", int, 12),
        Option("n_val", "val images in the miniature", int, 6),
    )

    def read_root(self, out: Path) -> Path:
        return Path(out) / TEXTOCR_DIRNAME

    def sample(self, out: Path, *, seed: int, n_train: int = 12, n_val: int = 6, **_: Any) -> Path:
        from benchsmith.sources.textocr.sample import write_sample_textocr

        return write_sample_textocr(out, n_train=n_train, n_val=n_val, seed=seed)

    def link(self, src: Path, out: Path) -> Path:
        """``out/TextOCR`` becomes a symlink to ``src`` (the folder itself or one holding
        ``TextOCR/``), once both annotation files and every image they name are found."""
        from benchsmith.sources.fetching.destination import link_folder
        from benchsmith.sources.textocr.reader import SPLITS, read_textocr

        src = Path(src).expanduser().resolve()
        if not annotations_path(src, "train").is_file() and (src / TEXTOCR_DIRNAME).is_dir():
            src = src / TEXTOCR_DIRNAME
        if not src.is_dir():
            raise SourceError("local TextOCR folder not found", path=src, fix=GET_IT)
        for split in SPLITS:
            read_textocr(src, split)  # refuses a copy whose annotations name missing images
        return link_folder(Path(out), TEXTOCR_DIRNAME, src)

    def check(self, root: Path, **_: Any) -> dict[str, Any]:
        from benchsmith.sources.textocr.reader import ILLEGIBLE, SPLITS, read_textocr

        root = Path(root)
        if not annotations_path(root, "train").is_file():
            root = self.read_root(root)
        counts = {}
        for split in SPLITS:
            images = read_textocr(root, split)
            counts[split] = {
                "images": len(images),
                "words": sum(len(i.words) for i in images),
                "illegible_words": sum(w.text == ILLEGIBLE for i in images for w in i.words),
            }
        return {"root": str(root), "splits": counts}


TEXTOCR = TextocrSource()
