"""CLEVR v1.0 as a :class:`~benchsmith.sources.base.Source`: sample, fetch, link, check."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchsmith.sources.base import Option, Source
from benchsmith.sources.clevr.reader import CLEVR_DIRNAME, CLEVR_URL


class ClevrSource(Source):
    name = "clevr"
    title = "CLEVR v1.0 (scenes JSON + images)"
    layout = "OUT/CLEVR_v1.0/scenes/CLEVR_{train,val}_scenes.json and OUT/CLEVR_v1.0/images/"
    verbs = ("sample", "fetch", "link", "check", "prepare")
    sample_options = (
        Option("n_train", "train scenes in the miniature", int, 24),
        Option("n_val", "val scenes in the miniature", int, 12),
    )
    fetch_options = (
        Option("url", "URL of CLEVR_v1.0.zip", str, CLEVR_URL),
        Option("download_dir", "where the zip is kept for reruns (default: OUT/downloads)", Path),
        Option("lock", "lock file with the zip's size and sha256", Path, "clevr.lock.json"),
    )

    def read_root(self, out: Path) -> Path:
        return Path(out) / CLEVR_DIRNAME

    def sample(self, out: Path, *, seed: int, n_train: int = 24, n_val: int = 12, **_: Any) -> Path:
        from benchsmith.sources.clevr.sample import write_sample_clevr

        return write_sample_clevr(out, n_train=n_train, n_val=n_val, seed=seed)

    def fetch(self, out: Path, **options: Any) -> Path:
        from benchsmith.sources.clevr.fetch import fetch_clevr

        return fetch_clevr(
            out,
            url=options["url"],
            lock_path=Path(options["lock"]),
            download_dir=options["download_dir"],
        )

    def link(self, src: Path, out: Path) -> Path:
        from benchsmith.sources.clevr.fetch import link_local_clevr

        return link_local_clevr(src, out)

    def check(self, root: Path, **_: Any) -> dict[str, Any]:
        from benchsmith.sources.clevr.reader import SCENE_SPLITS, read_clevr_scenes

        root = Path(root)
        if not (root / "scenes").is_dir():
            root = self.read_root(root)
        scenes = {split: read_clevr_scenes(root, split) for split in SCENE_SPLITS}
        return {"root": str(root), "scenes": {s: len(v) for s, v in scenes.items()}}


CLEVR = ClevrSource()
