"""MiniImageNet (Ravi-Larochelle split) as a :class:`~benchsmith.sources.base.Source`.

No ``fetch``: the images are ImageNet's and licence-gated, so the user links a copy they have,
in the Ravi layout, or a Hugging Face parquet copy, which ``link`` converts into that layout.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchsmith.core.errors import SourceError
from benchsmith.sources.base import Option, Source

LINKED_NAMES = ("train.csv", "val.csv", "test.csv", "images")
OPTIONAL_NAMES = ("LOC_synset_mapping.txt",)  # ImageNet's class names, linked when present


class MiniImageNetSource(Source):
    name = "miniimagenet"
    title = "MiniImageNet (Ravi-Larochelle split)"
    layout = "OUT/{train,val,test}.csv (filename,label) and OUT/images/ (flat or per class)"
    verbs = ("sample", "link", "check", "prepare")
    sample_options = (
        Option("images_per_class", "images per class in the miniature", int, 8),
        Option("layout", "flat (images/x.jpg) or per_class (images/<wnid>/x.jpg)", str, "flat"),
    )
    check_options = (
        Option("no_counts", "skip the 64/16/20 classes x 600 images count check", bool, False),
    )

    def sample(
        self, out: Path, *, seed: int, images_per_class: int = 8, layout: str = "flat", **_: Any
    ) -> Path:
        from benchsmith.sources.miniimagenet.sample import write_sample_miniimagenet

        return write_sample_miniimagenet(
            out, images_per_class=images_per_class, layout=layout, seed=seed
        )

    def link(self, src: Path, out: Path) -> Path:
        """A Ravi-layout folder is checked and linked; parquet files are converted into ``out``."""
        from benchsmith.sources.fetching.destination import replace_symlink
        from benchsmith.sources.miniimagenet.parquet import miniimagenet_from_hf_parquet
        from benchsmith.sources.miniimagenet.reader import read_miniimagenet

        src = Path(src).expanduser().resolve()
        if src.is_file() or (src.is_dir() and not (src / "train.csv").is_file()):
            return miniimagenet_from_hf_parquet(src, out)
        if not src.is_dir():
            raise SourceError(
                "local MiniImageNet copy not found",
                path=src,
                fix="point sources.miniimagenet.full.local_dir at a Ravi-layout folder "
                "({train,val,test}.csv + images/) or at a Hugging Face parquet copy",
            )
        read_miniimagenet(src)  # refuses a copy whose CSVs name missing images
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        optional = [name for name in OPTIONAL_NAMES if (src / name).is_file()]
        for name in (*LINKED_NAMES, *optional):
            target = src / name
            if name == "images":
                replace_symlink(out / name, target, fix="remove it or choose another --out folder")
            else:
                link = out / name
                if link.exists() and not link.is_symlink():
                    raise SourceError(
                        f"{link} exists and is not a symlink; refusing to replace it",
                        path=link,
                        fix="remove it or choose another --out folder",
                    )
                link.unlink(missing_ok=True)
                link.symlink_to(target)
        return out

    def check(self, root: Path, *, no_counts: bool = False, **_: Any) -> dict[str, Any]:
        from benchsmith.sources.miniimagenet.reader import (
            RAVI_COUNTS,
            RAVI_IMAGES_PER_CLASS,
            read_miniimagenet,
        )

        mini = read_miniimagenet(
            root,
            expect_classes=None if no_counts else RAVI_COUNTS,
            expect_images_per_class=None if no_counts else RAVI_IMAGES_PER_CLASS,
        )
        splits = {
            split: {"classes": len(mini.classes(split)), "images": len(images)}
            for split, images in mini.splits.items()
        }
        return {"root": str(mini.root), "layout": mini.layout, "splits": splits}


MINIIMAGENET = MiniImageNetSource()
